//! Finding the files to import and reading them as documents.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::knowledge::chunking::{TextFormat, markdown_title};
use crate::knowledge::ingest::SourceDocument;

/// File name extensions imported (compared without regard to case).
pub const SUPPORTED_EXTENSIONS: [&str; 3] = ["md", "markdown", "txt"];

/// The files to import, and those skipped while looking, with why.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FoundFiles {
    pub files: Vec<PathBuf>,
    pub skipped: Vec<(PathBuf, String)>,
}

/// The supported files named by `paths` or inside them (folders recursively, in name
/// order, hidden entries and links to folders left out).
pub fn collect_files(paths: &[PathBuf]) -> FoundFiles {
    let mut found = FoundFiles::default();
    for path in paths {
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, &mut found),
            Ok(_) => consider(path, &mut found),
            Err(error) => found
                .skipped
                .push((path.clone(), format!("unreadable ({error})"))),
        }
    }
    let mut seen = HashSet::new();
    found
        .files
        .retain(|path| seen.insert(fs::canonicalize(path).unwrap_or_else(|_| path.clone())));
    found
}

fn walk(folder: &Path, found: &mut FoundFiles) {
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) => {
            found
                .skipped
                .push((folder.to_owned(), format!("unreadable folder ({error})")));
            return;
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(file_type) = entry.file_type() else {
            found.skipped.push((path, "unreadable".to_owned()));
            continue;
        };
        if file_type.is_dir() {
            walk(&path, found);
        } else if file_type.is_symlink() && path.is_dir() {
            found
                .skipped
                .push((path, "a link to a folder (not followed)".to_owned()));
        } else {
            consider(&path, found);
        }
    }
}

fn consider(path: &Path, found: &mut FoundFiles) {
    if format_of(path).is_some() {
        found.files.push(path.to_owned());
    } else {
        found.skipped.push((
            path.to_owned(),
            "not Markdown or plain text (.md, .markdown, .txt)".to_owned(),
        ));
    }
}

/// The text format of a file, told by its extension; `None` for a file bor does not read.
pub fn format_of(path: &Path) -> Option<TextFormat> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    match extension.as_str() {
        "md" | "markdown" => Some(TextFormat::Markdown),
        "txt" => Some(TextFormat::Plain),
        _ => None,
    }
}

/// A file read as a document, or why it is skipped.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadFile {
    Document(SourceDocument),
    Skipped(String),
}

/// Reads `path`: its title is the first Markdown heading, else the file name; its
/// source is the absolute path, so a changed file replaces its earlier version.
pub fn read_document(path: &Path) -> ReadFile {
    let Some(format) = format_of(path) else {
        return ReadFile::Skipped("not Markdown or plain text (.md, .markdown, .txt)".to_owned());
    };
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => return ReadFile::Skipped(format!("unreadable ({error})")),
    };
    if bytes.contains(&0) {
        return ReadFile::Skipped("binary (it contains NUL bytes)".to_owned());
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            return ReadFile::Skipped(format!(
                "not UTF-8 (invalid byte at offset {})",
                error.utf8_error().valid_up_to()
            ));
        }
    };
    let content = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if content.trim().is_empty() {
        return ReadFile::Skipped("empty".to_owned());
    }
    let file_name = path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let title = match format {
        TextFormat::Markdown => markdown_title(content).unwrap_or(file_name),
        TextFormat::Plain => file_name,
    };
    let source = fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    ReadFile::Document(SourceDocument {
        title,
        source: Some(source.display().to_string()),
        content: content.to_owned(),
        format,
    })
}
