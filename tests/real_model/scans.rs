//! Answers from scanned pages (SPEC §19), with the default local models and Tesseract:
//! `bor import` of a folder holding a scanned PDF, a mixed PDF (a typed page, then a
//! scanned one) and a photo of a page (`fixtures/scans`, made by
//! `scripts/format-fixtures.sh`), then a question a file whose answer is only on one of
//! its scanned pages, a made-up fact no model knows otherwise.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::quality::{ADMIN_TOKEN, SETTINGS, app_with_default_models, env_lines, states_fact};
use crate::support::*;

/// The folder `bor import` reads.
const FOLDER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/real_model/fixtures/scans"
);

/// A question whose answer is on one scanned page of one file.
struct ScannedFact {
    file: &'static str,
    /// The pages of the file OCR reads.
    ocr_pages: u32,
    question: &'static str,
    /// The page the answer is on, from 1.
    page: u32,
    /// Words, any of which states the fact.
    fact: &'static [&'static str],
}

const SCANNED_FACTS: [ScannedFact; 3] = [
    ScannedFact {
        file: "scanned-harbour-ledger.pdf",
        ocr_pages: 2,
        question: "Who is the harbour master of Vell Island?",
        page: 2,
        fact: &["Brantwick", "Orsola"],
    },
    ScannedFact {
        file: "mixed-beekeepers-minutes.pdf",
        ocr_pages: 1,
        question: "How many hives did the treasurer of the Fennick Valley beekeepers count?",
        page: 2,
        fact: &["317"],
    },
    ScannedFact {
        file: "photo-ferry-notice.png",
        ocr_pages: 1,
        question: "Who sells the tickets for the Marrowgate ferry?",
        page: 1,
        fact: &["Callowen", "Idris"],
    },
];

/// `bor import FOLDER` on the app's database, with the app's settings and the model
/// servers themselves (the app's own proxy waits on this test's thread); its output.
fn bor_import(app: &RealModelApp) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_bor"))
        .arg("import")
        .arg(FOLDER)
        .current_dir(FOLDER)
        .envs(env_lines(SETTINGS))
        .env("BOR_DATABASE_URL", app.database_url())
        .env("BOR_LLM_BASE_URL", default_chat_server_url())
        .env("BOR_LLM_EMBED_BASE_URL", default_embed_server_url())
        .env("BOR_OCR", "tesseract")
        .env("BOR_LOG", "warn")
        .output()
        .expect("bor import runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The id of the document `bor import` read from `file` of [`FOLDER`].
async fn document_id(app: &RealModelApp, file: &str) -> i64 {
    let path = Path::new(FOLDER).join(file).display().to_string();
    for listed in app
        .get_json("/api/documents")
        .await
        .as_array()
        .expect("a list")
    {
        let id = listed["id"].as_i64().expect("an id");
        if app.get_json(&format!("/api/documents/{id}")).await["source"] == path.as_str() {
            return id;
        }
    }
    panic!("no document read from {path}")
}

#[actix_web::test]
async fn a_folder_of_scans_is_imported_and_each_answers_from_its_scanned_page_citing_it() {
    let app = app_with_default_models().await;
    let imported = bor_import(&app);
    for scanned in &SCANNED_FACTS {
        let path = Path::new(FOLDER).join(scanned.file).display().to_string();
        let pages = if scanned.ocr_pages == 1 {
            "page"
        } else {
            "pages"
        };
        let read = format!("; {} {pages} read by OCR", scanned.ocr_pages);
        assert!(
            imported.lines().any(|line| {
                line.starts_with(&format!("imported  {path} (")) && line.ends_with(&read)
            }),
            "{path}{read} in:\n{imported}"
        );
    }
    // The import ran beside the app; its index reads the documents again.
    assert_eq!(
        app.post_admin_json("/api/admin/reindex", ADMIN_TOKEN, json!({}))
            .await,
        200
    );

    let mut stated = Vec::new();
    let mut report = Vec::new();
    for scanned in &SCANNED_FACTS {
        let id = document_id(&app, scanned.file).await;
        let turn = app.chat(scanned.question).await;
        turn.assert_one_terminal_frame();
        let done = &turn.last().data;
        assert_eq!(done["path"], "grounded", "{}: {done}", scanned.question);
        // The best passage is the scanned page the answer is on, and says OCR read it.
        let best = &done["sources"][0];
        assert_eq!(best["document_id"], id, "{}: {done}", scanned.question);
        assert_eq!(best["page"], scanned.page, "{}: {done}", scanned.question);
        let document = app.get_json(&format!("/api/documents/{id}")).await;
        let passage = passage(&document, &best["chunk_id"]);
        assert_eq!(passage["page"], scanned.page, "{passage}");
        assert_eq!(passage["ocr"], true, "{passage}");

        let answer = turn.deltas();
        let fact: Vec<String> = scanned.fact.iter().map(|word| (*word).to_owned()).collect();
        let states = states_fact(&answer, &fact);
        if states {
            stated.push(scanned.file);
        }
        report.push(format!(
            "{} {:?} -> {answer:?}, citing {} page {}",
            if states { "right" } else { "WRONG" },
            scanned.question,
            scanned.file,
            best["page"]
        ));
    }
    eprintln!("{}", report.join("\n"));
    assert_eq!(
        stated.len(),
        SCANNED_FACTS.len(),
        "each answer states its fact:\n{}",
        report.join("\n")
    );
}

/// The chunk `chunk_id` of a `GET /api/documents/{id}` answer.
fn passage<'a>(document: &'a Value, chunk_id: &Value) -> &'a Value {
    document["chunks"]
        .as_array()
        .and_then(|chunks| chunks.iter().find(|chunk| &chunk["id"] == chunk_id))
        .unwrap_or_else(|| panic!("chunk {chunk_id} in {document}"))
}
