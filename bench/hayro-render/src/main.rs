//! Renders every page of a PDF with hayro to greyscale PGM files, as `pdftoppm -gray`
//! does: `hayro-render FILE.pdf OUT-PREFIX DPI` writes OUT-PREFIX-1.pgm, -2.pgm, …

use std::error::Error;
use std::sync::Arc;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::Pdf;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{PixmapSettings, RenderCache, RenderSettings, render};

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: hayro-render FILE.pdf OUT-PREFIX DPI";
    let (file, prefix, dpi) = match (args.next(), args.next(), args.next()) {
        (Some(file), Some(prefix), Some(dpi)) => (file, prefix, dpi.parse::<f32>()?),
        _ => return Err(usage.into()),
    };
    let pdf = Pdf::new(Arc::new(std::fs::read(file)?)).map_err(|error| format!("{error:?}"))?;
    let scale = dpi / 72.0;
    let pixmap_settings = PixmapSettings {
        x_scale: scale,
        y_scale: scale,
        bg_color: WHITE,
    };
    let cache = RenderCache::new();
    for (index, page) in pdf.pages().iter().enumerate() {
        let pixmap = render(
            page,
            &cache,
            &InterpreterSettings::default(),
            &RenderSettings::default(),
            &pixmap_settings,
        );
        let (width, height) = (pixmap.width(), pixmap.height());
        let mut pgm = format!("P5\n{width} {height}\n255\n").into_bytes();
        // Luma of the (white-backed, so opaque) RGBA pixels.
        pgm.extend(pixmap.data_as_u8_slice().chunks_exact(4).map(|rgba| {
            let luma =
                u32::from(rgba[0]) * 299 + u32::from(rgba[1]) * 587 + u32::from(rgba[2]) * 114;
            (luma / 1000) as u8
        }));
        std::fs::write(format!("{prefix}-{}.pgm", index + 1), pgm)?;
    }
    Ok(())
}
