use super::*;

fn piece(x0: f64, x1: f64, y: f64, text: &str) -> Piece {
    Piece {
        x0,
        x1,
        y,
        size: 10.0,
        text: text.to_owned(),
    }
}

#[test]
fn glyphs_on_a_baseline_become_words_and_far_ones_new_pieces() {
    let glyph = |x: f64, text: &str| Glyph {
        x,
        y: 100.0,
        advance: 5.0,
        size: 10.0,
        text: text.to_owned(),
    };
    let page = PageGlyphs {
        glyphs: vec![
            glyph(0.0, "a"),
            glyph(5.0, "b"),
            glyph(13.0, "c"),
            glyph(80.0, "d"),
        ],
        ..PageGlyphs::default()
    };
    let texts: Vec<String> = pieces(&page).into_iter().map(|piece| piece.text).collect();
    assert_eq!(texts, vec!["ab c", "d"]);
}

#[test]
fn two_columns_are_read_one_after_the_other() {
    let mut page = vec![piece(20.0, 280.0, 10.0, "Title across the page")];
    for row in 0..6 {
        let y = 30.0 + 12.0 * f64::from(row);
        page.push(piece(20.0, 140.0, y, &format!("left {row}")));
        page.push(piece(160.0, 280.0, y, &format!("right {row}")));
    }
    let blocks = blocks(&page, 300.0, &[]);
    let text: Vec<String> = blocks
        .iter()
        .map(|block| match block {
            Block::Paragraph(text) | Block::Line(text) | Block::Heading(_, text) => text.clone(),
        })
        .collect();
    assert_eq!(text[0], "Title across the page");
    assert!(text[1].starts_with("left 0 left 1"), "{text:?}");
    assert!(
        text.last().is_some_and(|last| last.ends_with("right 5")),
        "{text:?}"
    );
}

#[test]
fn running_headers_and_page_numbers_go_and_content_stays() {
    let page = |n: usize, body: &str| {
        vec![
            piece(20.0, 200.0, 10.0, "Journal of Archives"),
            piece(20.0, 200.0, 40.0, body),
            piece(100.0, 110.0, 400.0, &format!("{n}")),
        ]
    };
    let mut pages = vec![
        page(1, "first page"),
        page(2, "second page"),
        page(3, "third page"),
    ];
    drop_running_furniture(&mut pages);
    let texts: Vec<Vec<&str>> = pages
        .iter()
        .map(|p| p.iter().map(|piece| piece.text.as_str()).collect())
        .collect();
    assert_eq!(
        texts,
        vec![vec!["first page"], vec!["second page"], vec!["third page"]]
    );
}

#[test]
fn hyphenated_words_are_joined_within_and_across_pages() {
    let mut paragraph = "the inter-".to_owned();
    join_line(&mut paragraph, "national flow");
    assert_eq!(paragraph, "the international flow");
    let mut kept = "well-".to_owned();
    join_line(&mut kept, "Known");
    assert_eq!(kept, "well- Known");
    let mut previous = vec![Block::Paragraph("were classi-".to_owned())];
    let mut next = vec![Block::Paragraph("fied as omissions".to_owned())];
    join_across_pages(&mut previous, &mut next);
    assert_eq!(
        previous,
        vec![Block::Paragraph("were classified".to_owned())]
    );
    assert_eq!(next, vec![Block::Paragraph("as omissions".to_owned())]);
}
