//! The watcher on a temporary folder: files created, changed, renamed (also by an
//! editor's save-and-rename), deleted, and a burst of a thousand, each brought into the
//! knowledge base, with each file's state recorded for `bor check`.

use std::time::Duration;

use bor::db::watched_files;
use bor::testing::TestDatabase;
use bor::watch::{keep_in_step, start};
use bor_mock_llm::MockLlm;

use crate::import::{TempDir, added_through, ingestor, source, stored};
use crate::support::eventually_within;

/// `(id, title, source)` of each stored document.
type Stored = Vec<(i64, String, Option<String>)>;

/// How long a change may take to show while other tests load the machine.
const WATCH_LIMIT: Duration = Duration::from_secs(30);

async fn until(db: &TestDatabase, what: &str, mut wanted: impl FnMut(&Stored) -> bool) -> Stored {
    let mut last = Vec::new();
    let reached = eventually_within(WATCH_LIMIT, async || {
        last = stored(db).await;
        wanted(&last)
    })
    .await;
    assert!(reached, "{what}: {last:?}");
    last
}

fn has_source(documents: &Stored, wanted: &Option<String>) -> bool {
    documents.iter().any(|document| document.2 == *wanted)
}

async fn state_of(db: &TestDatabase, path: &std::path::Path) -> Option<(String, Option<String>)> {
    let path = path.display().to_string();
    watched_files::state_of(&mut db.connect().await, &path)
        .await
        .expect("the states are readable")
}

#[actix_web::test]
async fn a_watched_folder_stays_in_step_with_its_files() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let ingestor = ingestor(&db, &mock);
    let dir = TempDir::new();
    let cats = dir.write("cats.md", b"# Cats\n\nCats sleep most of the day.");
    let gone = dir.write(
        "gone.md",
        b"# Gone\n\nThis file is deleted before watching.",
    );
    bor::import::import_paths(&ingestor, std::slice::from_ref(&gone))
        .await
        .unwrap();
    let gone_source = source(&gone);
    std::fs::remove_file(&gone).unwrap();
    let folder = std::fs::canonicalize(&dir.0).unwrap();

    let watch =
        start(std::slice::from_ref(&dir.0), Default::default()).expect("the folder is watched");
    let watcher = ingestor.clone();
    actix_web::rt::spawn(async move { keep_in_step(&watcher, watch, &|_| {}).await });

    let cats_source = source(&cats);
    let first = until(&db, "the folder is imported and swept", |documents| {
        has_source(documents, &cats_source) && !has_source(documents, &gone_source)
    })
    .await;
    assert_eq!(first.len(), 1);

    let dogs = folder.join("dogs.txt");
    std::fs::write(&dogs, b"Dogs bark at the postman.").unwrap();
    let dogs_source = Some(dogs.display().to_string());
    until(&db, "a new file is imported", |documents| {
        has_source(documents, &dogs_source)
    })
    .await;

    std::fs::write(&cats, b"# Cats\n\nCats sleep all day long.").unwrap();
    let cats_id = first[0].0;
    until(&db, "a changed file replaces its document", |documents| {
        documents
            .iter()
            .any(|d| d.2 == cats_source && d.0 != cats_id)
    })
    .await;

    // An editor's save: the new text goes to a hidden temporary file, renamed over the old.
    let swap = folder.join(".dogs.txt.swp");
    std::fs::write(&swap, b"Dogs bark at the mail carrier.").unwrap();
    std::fs::rename(&swap, &dogs).unwrap();
    let mut conn = db.connect().await;
    let saved = eventually_within(WATCH_LIMIT, async || {
        let texts: Vec<String> = {
            use bor::db::schema::documents;
            use diesel::prelude::*;
            use diesel_async::RunQueryDsl;
            documents::table
                .filter(documents::source.eq(dogs.display().to_string()))
                .select(documents::content)
                .load(&mut conn)
                .await
                .unwrap()
        };
        texts == ["Dogs bark at the mail carrier."]
    })
    .await;
    assert!(saved, "the saved text replaces the old one");
    let now = stored(&db).await;
    assert!(
        !now.iter()
            .any(|d| d.2.as_deref().is_some_and(|s| s.contains(".swp"))),
        "{now:?}"
    );

    let kittens = folder.join("kittens.md");
    let cats_now = now.iter().find(|d| d.2 == cats_source).unwrap().0;
    std::fs::rename(&cats, &kittens).unwrap();
    let kittens_source = Some(kittens.display().to_string());
    let renamed = until(&db, "a renamed file keeps its document", |documents| {
        has_source(documents, &kittens_source) && !has_source(documents, &cats_source)
    })
    .await;
    assert!(
        renamed
            .iter()
            .any(|d| d.0 == cats_now && d.2 == kittens_source),
        "the same document, not embedded anew: {renamed:?}"
    );

    std::fs::remove_file(&dogs).unwrap();
    until(&db, "a deleted file's document is removed", |documents| {
        !has_source(documents, &dogs_source)
    })
    .await;
    assert_eq!(
        state_of(&db, &dogs).await,
        Some(("removed".to_owned(), None))
    );
    assert_eq!(
        state_of(&db, &kittens).await.map(|s| s.0),
        Some("imported".to_owned())
    );

    let broken = folder.join("broken.md");
    std::fs::write(&broken, b"# Bin\0ary").unwrap();
    let recorded =
        eventually_within(WATCH_LIMIT, async || state_of(&db, &broken).await.is_some()).await;
    assert!(recorded);
    assert_eq!(
        state_of(&db, &broken).await,
        Some((
            "skipped".to_owned(),
            Some("binary (it contains NUL bytes)".to_owned())
        ))
    );
    std::fs::remove_file(&broken).unwrap();
    let marked = eventually_within(WATCH_LIMIT, async || {
        state_of(&db, &broken)
            .await
            .is_some_and(|state| state.0 == "removed")
    })
    .await;
    assert!(marked, "a skipped file deleted reads removed");
}

#[actix_web::test]
async fn a_burst_of_a_thousand_files_is_imported() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let ingestor = ingestor(&db, &mock);
    let dir = TempDir::new();
    let watch =
        start(std::slice::from_ref(&dir.0), Default::default()).expect("the folder is watched");
    let watcher = ingestor.clone();
    actix_web::rt::spawn(async move { keep_in_step(&watcher, watch, &|_| {}).await });
    for n in 0..1000 {
        dir.write(
            &format!("burst/{}/note-{n}.md", n % 10),
            format!("# Note {n}\n\nThis is note number {n}.").as_bytes(),
        );
    }
    let mut count = 0;
    let all = eventually_within(Duration::from_secs(120), async || {
        count = stored(&db).await.len();
        count == 1000
    })
    .await;
    assert!(all, "{count} of 1000 imported");
}

#[actix_web::test]
async fn bor_serve_watches_the_folders_of_bor_watch_and_its_index_follows() {
    let dir = TempDir::new();
    let folder = std::fs::canonicalize(&dir.0).unwrap();
    let app = crate::support::TestApp::spawn_with(&[
        ("BOR_WATCH", &folder.display().to_string()),
        ("BOR_ADMIN_TOKEN", "admin-watch-7731"),
    ])
    .await;
    let owls = folder.join("owls.md");
    std::fs::write(&owls, b"# Owls\n\nOwls hunt at night.").unwrap();
    let owls_source = Some(owls.display().to_string());
    let db = app.database();
    let documents = until(db, "a file dropped in is imported", |documents| {
        has_source(documents, &owls_source)
    })
    .await;
    let id = documents[0].0;
    let indexed = eventually_within(WATCH_LIMIT, async || app.indexed_chunks(id) == 1).await;
    assert!(indexed, "retrieval finds it");
    // No one added it: the admin list says folder sync.
    let listed = app
        .get("/api/admin/documents", Some("admin-watch-7731"))
        .await
        .json();
    assert_eq!(listed["documents"][0]["origin"], "folder_sync", "{listed}");
    assert_eq!(listed["documents"][0]["added_by"], serde_json::Value::Null);
    assert_eq!(
        added_through(db).await,
        ["folder_sync"],
        "recorded as it is stored"
    );

    std::fs::remove_file(&owls).unwrap();
    until(db, "a file deleted is removed", |documents| {
        documents.is_empty()
    })
    .await;
    let forgotten = eventually_within(WATCH_LIMIT, async || app.indexed_chunks(id) == 0).await;
    assert!(forgotten, "retrieval no longer finds it");
}

#[actix_web::test]
async fn bor_check_shows_each_watched_file_state() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    {
        let mut conn = db.connect().await;
        use watched_files::FileState;
        for (path, state, reason) in [
            ("/notes/a.md", FileState::Imported, None),
            ("/notes/b.md", FileState::Imported, None),
            ("/notes/scan.pdf", FileState::Skipped, Some("no text layer")),
            ("/notes/old.md", FileState::Removed, None),
        ] {
            watched_files::record(&mut conn, path, state, reason)
                .await
                .unwrap();
        }
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_bor"))
        .arg("check")
        .current_dir(std::env::temp_dir())
        .env("BOR_DATABASE_URL", db.url())
        .env("BOR_LLM_BASE_URL", mock.base_url())
        .env("BOR_LOG", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("ok       watched files  2 imported, 1 removed, 1 skipped"),
        "{stdout}"
    );
    assert!(
        stdout.contains("         skipped        /notes/scan.pdf: no text layer"),
        "{stdout}"
    );
}

#[test]
fn a_folder_of_ten_thousand_files_is_watched_with_one_watch_per_folder() {
    let dir = TempDir::new();
    for n in 0..10_000 {
        dir.write(&format!("shelf-{}/note-{n}.txt", n % 100), b"A note.");
    }
    let watch = start(std::slice::from_ref(&dir.0), Default::default());
    assert!(watch.is_ok(), "{:?}", watch.err());
}

#[actix_web::test]
async fn the_admin_api_shows_each_watched_file_state() {
    const TOKEN: &str = "admin-watched-4410";
    let app = crate::support::TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    {
        let mut conn = app.database().connect().await;
        use watched_files::FileState;
        watched_files::record(&mut conn, "/notes/a.md", FileState::Imported, None)
            .await
            .unwrap();
        watched_files::record(
            &mut conn,
            "/notes/scan.pdf",
            FileState::Skipped,
            Some("no text layer"),
        )
        .await
        .unwrap();
    }
    let reply = app.get("/api/admin/watched-files", Some(TOKEN)).await;
    assert_eq!(
        reply.json(),
        serde_json::json!({
            "imported": 1,
            "skipped": 1,
            "removed": 0,
            "skipped_files": [{ "path": "/notes/scan.pdf", "reason": "no text layer" }]
        })
    );
    let anonymous = app.get("/api/admin/watched-files", None).await;
    assert_eq!(anonymous.json()["error"]["code"], "unauthorized");
}
