//! `bor import`: idempotency, replacement of changed files and re-embedding against a
//! real PostgreSQL, and the command's own output.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use bor::config::Config;
use bor::db::schema::{chunks, documents};
use bor::import::{ImportOptions, ImportSummary, import, import_paths};
use bor::knowledge::ingest::{Ingestor, ModelDimension};
use bor::state::{chunking_settings, llm_settings};
use bor::testing::TestDatabase;
use bor_actors::llm::LlmClient;
use bor_mock_llm::MockLlm;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Integer;
use diesel_async::RunQueryDsl;

use crate::documents::insert_one_chunk;
use crate::support::format_fixture as fixture;

/// A folder of its own under the system's temporary folder, removed on drop.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new() -> TempDir {
        let path =
            std::env::temp_dir().join(format!("bor-import-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&path).expect("a temporary folder");
        TempDir(path)
    }

    pub(crate) fn write(&self, name: &str, contents: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        let folder = path.parent().expect("a file in a folder");
        std::fs::create_dir_all(folder).expect("the folder is made");
        std::fs::write(&path, contents).expect("the file is written");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `documents.added_through` of every stored document, in the order stored.
pub(crate) async fn added_through(db: &TestDatabase) -> Vec<String> {
    documents::table
        .select(documents::added_through)
        .order(documents::id)
        .load(&mut db.connect().await)
        .await
        .expect("the documents are readable")
}

/// A folder with two importable files and four that are skipped.
fn notes() -> TempDir {
    let dir = TempDir::new();
    dir.write(
        "cats.md",
        b"# Cats\n\nCats sleep most of the day.\n\n## Kittens\n\nKittens play.",
    );
    dir.write("sub/dogs.txt", b"Dogs bark at the postman.");
    dir.write("image.gif", b"GIF89a");
    dir.write("binary.md", b"# Bin\0ary");
    dir.write("latin1.txt", b"caf\xe9 au lait");
    dir.write("empty.md", b" \n\t\n");
    dir.write(".hidden/secret.md", b"# Secret");
    dir
}

pub(crate) fn ingestor(db: &TestDatabase, mock: &MockLlm) -> Ingestor {
    ingestor_with(db, mock, &[])
}

/// An ingestor with settings beyond the database and the mock.
fn ingestor_with(db: &TestDatabase, mock: &MockLlm, settings: &[(&str, &str)]) -> Ingestor {
    let config = Config::from_vars(
        [
            ("BOR_DATABASE_URL".to_owned(), db.url().to_owned()),
            ("BOR_LLM_BASE_URL".to_owned(), mock.base_url()),
            ("BOR_LLM_RETRY_DELAY".to_owned(), "0".to_owned()),
        ]
        .into_iter()
        .chain(
            settings
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
        ),
    )
    .expect("a valid configuration");
    Ingestor::new(
        db.pool(),
        LlmClient::new(Arc::new(llm_settings(&config))),
        chunking_settings(&config),
        Arc::new(ModelDimension::default()),
    )
}

pub(crate) async fn stored(db: &TestDatabase) -> Vec<(i64, String, Option<String>)> {
    let mut conn = db.connect().await;
    documents::table
        .select((documents::id, documents::title, documents::source))
        .order(documents::id)
        .load(&mut conn)
        .await
        .expect("documents are readable")
}

/// The dimension of every stored chunk's embedding.
async fn chunk_dimensions(db: &TestDatabase) -> Vec<i32> {
    let mut conn = db.connect().await;
    chunks::table
        .select(sql::<Integer>("cardinality(embedding)"))
        .load(&mut conn)
        .await
        .expect("chunks are readable")
}

pub(crate) fn source(path: &Path) -> Option<String> {
    let absolute = std::fs::canonicalize(path).expect("the file exists");
    Some(absolute.display().to_string())
}

#[actix_web::test]
async fn files_prepared_together_are_stored_in_the_folders_order_even_through_one_connection() {
    // More files than are prepared at once, and a pool of a single connection: a
    // preparation that waited for the connection while another file was being stored
    // would time out the import.
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let config = Config::from_vars([
        ("BOR_DATABASE_URL".to_owned(), db.url().to_owned()),
        ("BOR_LLM_BASE_URL".to_owned(), mock.base_url()),
    ])
    .expect("a valid configuration");
    let ingestor = Ingestor::new(
        bor::db::DbPool::new(db.url(), 1).expect("a pool"),
        LlmClient::new(Arc::new(llm_settings(&config))),
        chunking_settings(&config),
        Arc::new(ModelDimension::default()),
    );
    let dir = TempDir::new();
    let names: Vec<String> = (0..12).map(|n| format!("note-{n:02}.md")).collect();
    for (n, name) in names.iter().enumerate() {
        // Longer files first: the later ones are ready sooner.
        let words = "word ".repeat(400 - n * 30);
        dir.write(name, format!("# Note {n:02}\n\n{words}").as_bytes());
    }

    let summary = import_paths(&ingestor, std::slice::from_ref(&dir.0))
        .await
        .unwrap();
    assert_eq!((summary.imported, summary.skipped), (12, 0));
    let titles: Vec<String> = stored(&db).await.into_iter().map(|d| d.1).collect();
    let expected: Vec<String> = (0..12).map(|n| format!("Note {n:02}")).collect();
    assert_eq!(titles, expected, "numbered in the folder's order");
}

#[actix_web::test]
async fn importing_is_idempotent_and_a_changed_file_replaces_its_old_version() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let ingestor = ingestor(&db, &mock);
    let dir = notes();
    let paths = [dir.0.clone()];

    let first = import_paths(&ingestor, &paths).await.unwrap();
    assert_eq!(
        (
            first.imported,
            first.skipped,
            first.unchanged,
            first.replaced
        ),
        (2, 4, 0, 0)
    );
    assert_eq!(
        first.chunks, 3,
        "two sections in cats.md, one chunk in dogs.txt"
    );
    let documents = stored(&db).await;
    let titles: Vec<&str> = documents.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(titles, ["Cats", "dogs.txt"]);
    assert_eq!(documents[0].2, source(&dir.0.join("cats.md")));

    let embedded_before = mock.embedding_requests().len();
    let second = import_paths(&ingestor, &paths).await.unwrap();
    assert_eq!(
        second,
        ImportSummary {
            unchanged: 2,
            skipped: 4,
            ..ImportSummary::default()
        }
    );
    assert_eq!(stored(&db).await, documents, "nothing changed");
    assert!(
        mock.embedding_requests().len() <= embedded_before + 1,
        "at most a dimension probe"
    );

    dir.write("cats.md", b"# Cats\n\nCats sleep all day long.");
    let third = import_paths(&ingestor, &paths).await.unwrap();
    assert_eq!(
        (
            third.replaced,
            third.unchanged,
            third.imported,
            third.chunks
        ),
        (1, 1, 0, 1)
    );
    let after = stored(&db).await;
    assert_eq!(after.len(), 2);
    assert!(
        !after.iter().any(|d| d.0 == documents[0].0),
        "the old version is gone"
    );
    let mut conn = db.connect().await;
    let texts: Vec<String> = chunks::table
        .inner_join(documents::table)
        .filter(documents::title.eq("Cats"))
        .select(chunks::text)
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(texts, ["# Cats\n\nCats sleep all day long."]);
}

#[actix_web::test]
async fn a_new_embedding_model_re_embeds_unchanged_files() {
    let db = TestDatabase::migrated().await;
    let dir = TempDir::new();
    let file = dir.write("owls.md", b"# Owls\n\nOwls hunt at night.");
    let old_model = MockLlm::builder().embedding_dim(32).start().unwrap();
    let first = import_paths(&ingestor(&db, &old_model), std::slice::from_ref(&file))
        .await
        .unwrap();
    assert_eq!(first.imported, 1);

    let new_model = MockLlm::start().unwrap();
    let second = import_paths(&ingestor(&db, &new_model), std::slice::from_ref(&file))
        .await
        .unwrap();
    assert_eq!(
        (second.refreshed, second.unchanged, second.chunks),
        (1, 0, 1)
    );
    let dimensions = chunk_dimensions(&db).await;
    assert_eq!(dimensions, [64]);
    assert_eq!(
        stored(&db).await.len(),
        1,
        "the same document, embedded anew"
    );

    // The same dimension, with a document prefix: embedded anew once.
    let prefixed = ingestor_with(
        &db,
        &new_model,
        &[("BOR_LLM_EMBED_DOCUMENT_PREFIX", "search_document: ")],
    );
    for (refreshed, unchanged) in [(1, 0), (0, 1)] {
        let summary = import_paths(&prefixed, std::slice::from_ref(&file))
            .await
            .unwrap();
        assert_eq!(
            (summary.refreshed, summary.unchanged),
            (refreshed, unchanged)
        );
    }
}

/// `bor import DIR` in `dir`, on `db`, with `mock` as the only LLM server.
fn bor_import(dir: &TempDir, db: &TestDatabase, mock: &MockLlm) -> std::process::Output {
    bor_import_with(dir, db, mock, &[])
}

fn bor_import_with(
    dir: &TempDir,
    db: &TestDatabase,
    mock: &MockLlm,
    settings: &[(&str, &str)],
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bor"))
        .arg("import")
        .arg(&dir.0)
        .current_dir(&dir.0)
        .env("BOR_DATABASE_URL", db.url())
        .env("BOR_LLM_BASE_URL", mock.base_url())
        .env("BOR_LLM_RETRY_DELAY", "0")
        .env("BOR_LOG", "warn")
        .envs(settings.iter().copied())
        .output()
        .unwrap()
}

/// Chunks of the model's dimension that another model or document prefix made are
/// compared by retrieval although they are not alike: `bor import` says so.
#[actix_web::test]
async fn bor_import_names_chunks_embedded_with_another_document_prefix() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let earlier = TempDir::new();
    let owls = earlier.write("owls.md", b"# Owls\n\nOwls hunt at night.");
    import_paths(&ingestor(&db, &mock), &[owls]).await.unwrap();
    let later = TempDir::new();
    later.write("bats.md", b"# Bats\n\nBats sleep upside down.");
    let output = bor_import_with(
        &later,
        &db,
        &mock,
        &[("BOR_LLM_EMBED_DOCUMENT_PREFIX", "search_document: ")],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let notes: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("note: "))
        .collect();
    assert_eq!(
        notes.len(),
        1,
        "one note, for the owls' chunk only: {stdout}"
    );
    assert!(
        notes[0].starts_with(
            "note: 1 chunks were embedded by another model or with another document prefix than "
        ) && notes[0].ends_with(" now: run `bor reembed`"),
        "{stdout}"
    );
}

#[actix_web::test]
async fn bor_import_says_how_many_pages_ocr_read_and_which_it_skipped() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let dir = TempDir::new();
    dir.write("mixed.pdf", &fixture("mixed-report.pdf"));
    dir.write("photo.webp", &fixture("tex-report-page-2.webp"));
    dir.write("scanned.pdf", &fixture("scanned-report.pdf"));
    let output = Command::new(env!("CARGO_BIN_EXE_bor"))
        .arg("import")
        .arg(&dir.0)
        .current_dir(&dir.0)
        .env("BOR_DATABASE_URL", db.url())
        .env("BOR_LLM_BASE_URL", mock.base_url())
        .env("BOR_OCR_MAX_PAGES", "1")
        .env("BOR_LOG", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let path = |name: &str| dir.0.join(name).display().to_string();
    for expected in [
        format!(
            "imported  {} (2 chunks); 1 page read by OCR",
            path("mixed.pdf")
        ),
        format!(
            "imported  {} (1 chunks); 1 page read by OCR",
            path("photo.webp")
        ),
        format!(
            "imported  {} (2 chunks); 1 page read by OCR, 1 skipped (page 2: past OCR's cap of 1 page a document)",
            path("scanned.pdf")
        ),
    ] {
        assert!(
            stdout.lines().any(|line| line == expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}

#[actix_web::test]
async fn bor_import_prints_a_line_per_file_retries_and_a_summary() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let dir = notes();
    dir.write(
        "flaky.md",
        b"# Flaky\n\nThe first embedding attempt fails.\nMOCK {\"status\":503,\"times\":1,\"on\":\"embeddings\"}",
    );
    {
        // A document embedded by an older model (3 dimensions).
        let mut conn = db.connect().await;
        insert_one_chunk(&mut conn, "Old", "Stale vectors.", &[0.1, 0.2, 0.3]).await;
    }
    let output = bor_import(&dir, &db, &mock);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let path = |name: &str| dir.0.join(name).display().to_string();
    for expected in [
        format!("imported  {} (2 chunks)", path("cats.md")),
        format!("imported  {} (1 chunks)", path("sub/dogs.txt")),
        format!("imported  {} (1 chunks)", path("flaky.md")),
        format!("skipped   {}: not a kind bor reads (.md, .markdown, .txt, .text, .pdf, .html, .htm, .docx, .png, .jpg, .jpeg, .tif, .tiff, .webp)", path("image.gif")),
        format!("skipped   {}: binary (it contains NUL bytes)", path("binary.md")),
        format!("skipped   {}: not UTF-8 (invalid byte at offset 3)", path("latin1.txt")),
        format!("skipped   {}: empty: the document holds no text", path("empty.md")),
        "embedding request failed; retrying (1 of 3)…".to_owned(),
        "note: 1 chunks were embedded with 3 dimensions, but the embedding model gives 64: they are left out of retrieval until they are embedded anew: run `bor reembed`".to_owned(),
    ] {
        assert!(lines.contains(&expected.as_str()), "missing {expected:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("secret.md"), "hidden folders are left out");
    let summary = lines
        .iter()
        .find(|l| l.starts_with("imported 3,"))
        .unwrap_or(&"");
    assert!(
        summary.starts_with(
            "imported 3, unchanged 0, replaced 0, re-embedded 0, skipped 4; 4 chunks in "
        ),
        "{stdout}"
    );
}

#[actix_web::test]
async fn bor_import_against_a_chat_server_without_embeddings_says_which_variable_to_set() {
    let db = TestDatabase::migrated().await;
    let chat_only = MockLlm::builder().without_embeddings().start().unwrap();
    let dir = notes();
    let output = bor_import(&dir, &db, &chat_only);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "{shown}");
    for expected in [
        "the embeddings server does not serve embeddings (HTTP 500: Llama model must be created with embedding=True".to_owned(),
        format!(
            "BOR_LLM_EMBED_BASE_URL is unset, so embeddings go to BOR_LLM_BASE_URL={}, the chat server; set BOR_LLM_EMBED_BASE_URL",
            chat_only.base_url()
        ),
    ] {
        assert!(shown.contains(&expected), "missing {expected:?} in:\n{shown}");
    }
    assert!(
        !shown.contains("retrying"),
        "a refusal is not retried: {shown}"
    );
    // Documents are prepared several at a time, so each of the three readable ones may
    // have asked once before the import stopped; none asked again.
    let asked: Vec<String> = chat_only
        .embedding_requests()
        .iter()
        .map(|request| request["input"].to_string())
        .collect();
    let distinct: HashSet<&String> = asked.iter().collect();
    assert!(
        (1..=3).contains(&asked.len()) && distinct.len() == asked.len(),
        "each text asked for once at most: {asked:?}\n{shown}"
    );
    let stopped = shown
        .lines()
        .find(|line| line.starts_with("bor import: stopped: "))
        .unwrap_or_default();
    assert_eq!(
        stopped.matches("does not serve embeddings").count(),
        1,
        "said once: {shown}"
    );
}

#[actix_web::test]
async fn bor_reembed_embeds_anew_only_the_documents_of_another_model() {
    let db = TestDatabase::migrated().await;
    let dir = TempDir::new();
    let owls = dir.write("owls.md", b"# Owls\n\nOwls hunt at night.");
    let bats = dir.write("bats.txt", b"Bats sleep upside down.");
    let old_model = MockLlm::builder().embedding_dim(32).start().unwrap();
    import_paths(&ingestor(&db, &old_model), &[owls])
        .await
        .unwrap();
    let new_model = MockLlm::start().unwrap();
    import_paths(&ingestor(&db, &new_model), &[bats])
        .await
        .unwrap();
    std::fs::remove_dir_all(&dir.0).unwrap();

    // `bor COMMAND` against the new model, with `settings` on top.
    let bor_with = |command: &str, settings: &[(&str, &str)]| {
        Command::new(env!("CARGO_BIN_EXE_bor"))
            .arg(command)
            .current_dir(std::env::temp_dir())
            .env("BOR_DATABASE_URL", db.url())
            .env("BOR_LLM_BASE_URL", new_model.base_url())
            .env("BOR_LOG", "warn")
            .envs(settings.iter().copied())
            .output()
            .unwrap()
    };
    let reembed_with = |settings: &[(&str, &str)]| bor_with("reembed", settings);
    let reembed = || reembed_with(&[]);
    let check_with = |settings: &[(&str, &str)]| {
        String::from_utf8_lossy(&bor_with("check", settings).stdout).into_owned()
    };
    let output = reembed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("owls.md (1 chunks)") && !stdout.contains("bats.txt"),
        "only the document of the old model, from its stored text (the file is gone): {stdout}"
    );
    assert!(
        stdout.contains(
            "reembed: 1 document(s), 1 chunks embedded anew for the embedding model (64 dimensions)"
        ),
        "{stdout}"
    );
    let dimensions = chunk_dimensions(&db).await;
    assert_eq!(dimensions, [64, 64]);
    assert_eq!(stored(&db).await.len(), 2, "the same documents");

    let again = reembed();
    assert!(
        String::from_utf8_lossy(&again.stdout)
            .contains("reembed: every document fits the embedding model (64 dimensions)")
    );

    // Vectors of the same dimension made otherwise: a document prefix, another model.
    let fits = "reembed: every document fits the embedding model (64 dimensions)";
    for settings in [
        [("BOR_LLM_EMBED_DOCUMENT_PREFIX", "search_document: ")],
        [("BOR_LLM_EMBED_MODEL", "another-embedder")],
    ] {
        let checked = check_with(&settings);
        assert!(
            checked.contains(
                "2 documents, 2 chunks, embeddings of 64 dimensions (2 embedded by another model or document prefix: run `bor reembed`)"
            ) && checked.contains("status   degraded: ")
                && checked.contains(
                    "2 chunks were embedded by another model or document prefix than the one configured: run `bor reembed`"
                ),
            "{settings:?}: {checked}"
        );
        let changed = reembed_with(&settings);
        let stdout = String::from_utf8_lossy(&changed.stdout);
        assert!(
            stdout.contains("reembed: 2 document(s), 2 chunks embedded anew"),
            "{settings:?}: {stdout}"
        );
        let again = reembed_with(&settings);
        assert!(
            String::from_utf8_lossy(&again.stdout).contains(fits),
            "{settings:?}"
        );
        let checked = check_with(&settings);
        assert!(
            checked.contains(
                "ok       knowledge base 2 documents, 2 chunks, embeddings of 64 dimensions\n"
            ),
            "{settings:?}: {checked}"
        );
    }
}

#[actix_web::test]
async fn pdf_word_and_html_files_are_imported_with_their_kind_headings_and_pages() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let ingestor = ingestor(&db, &mock);
    let dir = TempDir::new();
    dir.write("report.pdf", &fixture("tex-report.pdf"));
    dir.write("letter.docx", &fixture("libreoffice.docx"));
    dir.write("guide.html", &fixture("sphinx.html"));
    dir.write("locked.pdf", &fixture("encrypted.pdf"));
    dir.write("scan.pdf", &fixture("tex-no-text.pdf"));

    let summary = import_paths(&ingestor, std::slice::from_ref(&dir.0))
        .await
        .unwrap();
    assert_eq!((summary.imported, summary.skipped), (3, 2), "{summary:?}");

    let mut conn = db.connect().await;
    let kinds: Vec<(String, String)> = documents::table
        .select((documents::source.assume_not_null(), documents::content_type))
        .order(documents::id)
        .load(&mut conn)
        .await
        .unwrap();
    let kind_of = |file: &str| {
        kinds
            .iter()
            .find(|(source, _)| source.ends_with(file))
            .map(|(_, kind)| kind.as_str())
    };
    assert_eq!(kind_of("report.pdf"), Some("application/pdf"));
    assert_eq!(
        kind_of("letter.docx"),
        Some("application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    );
    assert_eq!(kind_of("guide.html"), Some("text/html"));

    let pdf_pages: Vec<Option<i32>> = chunks::table
        .inner_join(documents::table)
        .filter(documents::content_type.eq("application/pdf"))
        .select(chunks::page)
        .order(chunks::ord)
        .load(&mut conn)
        .await
        .unwrap();
    assert!(pdf_pages.iter().all(Option::is_some), "{pdf_pages:?}");
    assert!(
        pdf_pages.is_sorted(),
        "pages follow the text: {pdf_pages:?}"
    );
    assert!(pdf_pages.last().unwrap().unwrap() > 1, "{pdf_pages:?}");
    let headings: Vec<String> = chunks::table
        .select(chunks::heading)
        .load(&mut conn)
        .await
        .unwrap();
    assert!(
        headings.iter().any(|heading| !heading.is_empty()),
        "headings are kept: {headings:?}"
    );
    let other_pages: i64 = chunks::table
        .inner_join(documents::table)
        .filter(documents::content_type.ne("application/pdf"))
        .filter(chunks::page.is_not_null())
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    assert_eq!(other_pages, 0, "only a PDF has pages");
}

#[actix_web::test]
async fn sync_removes_the_documents_of_files_gone_from_the_folder_and_nothing_else() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let ingestor = ingestor(&db, &mock);
    let root = TempDir::new();
    let notes = root.0.join("notes");
    let cats = root.write("notes/cats.md", b"# Cats\n\nCats sleep most of the day.");
    let dogs = root.write("notes/sub/dogs.txt", b"Dogs bark at the postman.");
    root.write("notes/.hidden/owls.md", b"# Owls\n\nOwls hunt at night.");
    let sibling = root.write("notes-old/bats.md", b"# Bats\n\nBats sleep upside down.");
    let hidden = root.0.join("notes/.hidden/owls.md");
    let sync = ImportOptions {
        sync: true,
        ..ImportOptions::default()
    };
    let everything = [notes.clone(), sibling.clone(), hidden.clone()];
    import(&ingestor, &everything, &ImportOptions::default())
        .await
        .unwrap();
    let (cats_source, dogs_source) = (source(&cats), source(&dogs));
    let (sibling_source, hidden_source) = (source(&sibling), source(&hidden));
    assert_eq!(stored(&db).await.len(), 4);

    std::fs::remove_file(&cats).unwrap();
    let hounds = notes.join("sub/hounds.txt");
    std::fs::rename(&dogs, &hounds).unwrap();
    root.write("notes/mice.md", b"# Mice\n\nMice like cheese.");
    let summary = import(&ingestor, std::slice::from_ref(&notes), &sync)
        .await
        .unwrap();
    assert_eq!(
        (
            summary.imported,
            summary.unchanged,
            summary.removed,
            summary.skipped
        ),
        (1, 1, Some(1), 0),
        "{summary:?}"
    );
    let sources: Vec<Option<String>> = stored(&db).await.into_iter().map(|d| d.2).collect();
    assert!(!sources.contains(&cats_source), "{sources:?}");
    assert!(!sources.contains(&dogs_source), "{sources:?}");
    assert!(sources.contains(&source(&hounds)), "moved: {sources:?}");
    assert!(
        sources.contains(&sibling_source),
        "a sibling folder with the same start is not inside: {sources:?}"
    );
    assert!(
        sources.contains(&hidden_source),
        "a file still there (though hidden) keeps its document: {sources:?}"
    );
    assert_eq!(sources.len(), 4, "{sources:?}");

    std::fs::remove_dir_all(&notes).unwrap();
    let gone_folder = import(&ingestor, std::slice::from_ref(&notes), &sync)
        .await
        .unwrap();
    assert_eq!(
        gone_folder.removed,
        Some(0),
        "a folder not found removes nothing"
    );
    assert_eq!(stored(&db).await.len(), 4);
}

#[actix_web::test]
async fn bor_import_sync_says_what_it_removed() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let dir = notes();
    let import = |sync: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bor"));
        command.arg("import");
        if sync {
            command.arg("--sync");
        }
        command
            .arg(&dir.0)
            .current_dir(&dir.0)
            .env("BOR_DATABASE_URL", db.url())
            .env("BOR_LLM_BASE_URL", mock.base_url())
            .env("BOR_LOG", "warn")
            .output()
            .unwrap()
    };
    assert!(import(false).status.success());
    let cats = dir.0.join("cats.md");
    let cats_source = source(&cats).unwrap();
    std::fs::remove_file(&cats).unwrap();
    dir.write("sub/dogs.txt", b"Dogs bark at the mail carrier.");

    let output = import(true);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|line| line == format!("removed   {cats_source} (the file is gone)")),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "imported 0, unchanged 0, replaced 1, re-embedded 0, removed 1, skipped 4; 1 chunks in "
        ),
        "{stdout}"
    );
    assert_eq!(stored(&db).await.len(), 1);
}

#[actix_web::test]
async fn bor_import_collection_stores_into_it_and_syncs_only_its_own_documents() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let dir = notes();
    let import = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_bor"))
            .arg("import")
            .args(args)
            .arg(&dir.0)
            .env("BOR_DATABASE_URL", db.url())
            .env("BOR_LLM_BASE_URL", mock.base_url())
            .env("BOR_LOG", "warn")
            .output()
            .unwrap()
    };
    let collection_of = async |name: &str| -> Vec<(String, String)> {
        let mut conn = db.connect().await;
        bor::db::documents::list_documents(&mut conn, None)
            .await
            .unwrap()
            .into_iter()
            .filter(|document| document.collection == name)
            .map(|document| (document.title, document.collection))
            .collect()
    };
    assert!(import(&[]).status.success());
    let output = import(&["--collection", "hr"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("imported 2, unchanged 0"),
        "the same files are new to another collection: {stdout}"
    );
    assert_eq!(collection_of("hr").await.len(), 2, "made when absent");
    assert_eq!(collection_of("default").await.len(), 2);
    assert_eq!(
        added_through(&db).await,
        ["command_line"; 4],
        "each document says the command line stored it"
    );

    // A sync of hr removes hr's document of a file gone, and leaves default's.
    std::fs::remove_file(dir.0.join("cats.md")).unwrap();
    let output = import(&["--sync", "--collection", "hr"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("removed 1"), "{stdout}");
    assert_eq!(collection_of("hr").await.len(), 1);
    assert_eq!(collection_of("default").await.len(), 2);

    let refused = import(&["--collection", "Not Valid"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("a collection name is 1 to 64 characters"),
        "{stderr}"
    );
}
