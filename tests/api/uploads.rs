//! Uploads to `POST /api/admin/documents` as `multipart/form-data` (docs/PROTOCOL.md,
//! "Document routes"): files of every kind, the ones that cannot be read listed with
//! why, the size bound.

use serde_json::Value;

use crate::support::format_fixture as fixture;
use crate::support::*;

const TOKEN: &str = "t";
const BOUNDARY: &str = "bor-test-boundary-7d1";

/// A multipart body of `(field name, file name, bytes)` parts.
fn multipart(parts: &[(&str, &str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (field, file, bytes) in parts {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{file}\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

async fn upload(app: &TestApp, parts: &[(&str, &str, &[u8])]) -> JsonResponse {
    app.post_document_raw(
        Some(TOKEN),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        multipart(parts),
    )
    .await
}

fn entry<'a>(list: &'a Value, file: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["file"] == file)
        .unwrap_or_else(|| panic!("no {file} in {list}"))
}

#[actix_web::test]
async fn several_files_of_every_kind_are_stored_and_unreadable_ones_listed_with_why() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let pdf = fixture("tex-report.pdf");
    let docx = fixture("libreoffice.docx");
    let locked = fixture("encrypted.pdf");
    let notes = b"# Notes\n\nThe kettle is in the left cupboard.";
    let reply = upload(
        &app,
        &[
            ("file", "report.pdf", &pdf),
            ("file", "letter.docx", &docx),
            ("file", "../../notes.md", notes),
            ("file", "locked.pdf", &locked),
            ("comment", "ignored.txt", b"not a file part"),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.json);
    let documents = &reply.json["documents"];
    assert_eq!(documents.as_array().unwrap().len(), 3, "{documents}");
    let notes_entry = entry(documents, "notes.md");
    assert_eq!(notes_entry["title"], "Notes");
    assert_eq!(notes_entry["status"], "imported");
    assert!(notes_entry["chunks"].as_i64().unwrap() >= 1);
    let report = entry(documents, "report.pdf");
    let skipped = &reply.json["skipped"];
    assert_eq!(skipped.as_array().unwrap().len(), 1, "{skipped}");
    let reason = entry(skipped, "locked.pdf")["reason"].as_str().unwrap();
    assert!(
        reason.contains("password") || reason.contains("encrypted"),
        "{reason}"
    );

    // The PDF keeps its kind and pages.
    let id = report["id"].as_i64().unwrap();
    let stored = app.get(&format!("/api/documents/{id}"), None).await;
    let document: Value = serde_json::from_slice(&stored.body).unwrap();
    assert_eq!(document["content_type"], "application/pdf");
    assert!(document["chunks"][0]["page"].as_i64().unwrap() >= 1);

    // The same files again: unchanged.
    let again = upload(&app, &[("file", "notes.md", notes)]).await;
    assert_eq!(
        entry(&again.json["documents"], "notes.md")["status"],
        "unchanged"
    );
}

#[actix_web::test]
async fn a_file_past_the_upload_bound_is_skipped_and_the_next_one_stored() {
    let app =
        TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN), ("BOR_MAX_UPLOAD_BYTES", "2048")]).await;
    let large = format!("# Large\n\n{}", "word ".repeat(2000));
    let reply = upload(
        &app,
        &[
            ("file", "large.md", large.as_bytes()),
            ("file", "small.md", b"# Small\n\nA short note."),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.json);
    let reason = entry(&reply.json["skipped"], "large.md")["reason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("2048 bytes"), "{reason}");
    assert_eq!(
        entry(&reply.json["documents"], "small.md")["status"],
        "imported"
    );
}

#[actix_web::test]
async fn an_upload_needs_a_file_part_and_the_admin_token() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let empty = upload(&app, &[("comment", "x.txt", b"x")]).await;
    assert_eq!((empty.status, empty.error_code()), (400, "invalid_json"));
    let anonymous = app
        .post_document_raw(
            None,
            &format!("multipart/form-data; boundary={BOUNDARY}"),
            multipart(&[("file", "a.md", b"# A")]),
        )
        .await;
    assert_eq!(anonymous.status, 401);
    assert_eq!(app.documents().await, serde_json::json!([]));
}

/// The passages of document `id`, as `GET /api/documents/{id}` gives them.
async fn passages(app: &TestApp, id: &Value) -> Vec<Value> {
    let stored = app.get(&format!("/api/documents/{id}"), None).await;
    let document: Value = serde_json::from_slice(&stored.body).unwrap();
    document["chunks"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn scanned_pages_and_images_are_read_by_ocr_and_say_so_page_by_page() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let scanned = fixture("scanned-report.pdf");
    let mixed = fixture("mixed-report.pdf");
    let photo = fixture("tex-report-page-2.webp");
    let reply = upload(
        &app,
        &[
            ("file", "scanned.pdf", &scanned),
            ("file", "mixed.pdf", &mixed),
            ("file", "photo.webp", &photo),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.json);
    let documents = &reply.json["documents"];
    for (file, ocr_pages) in [("scanned.pdf", 2), ("mixed.pdf", 1), ("photo.webp", 1)] {
        let entry = entry(documents, file);
        assert_eq!(entry["ocr_pages"], ocr_pages, "{entry}");
        assert_eq!(entry["skipped_pages"], serde_json::json!([]), "{entry}");
    }

    // The typed page of the mixed PDF is its text layer, the scanned one OCR's reading.
    let mixed_passages = passages(&app, &entry(documents, "mixed.pdf")["id"]).await;
    let passage = |needle: &str| {
        mixed_passages
            .iter()
            .find(|chunk| chunk["text"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} in {mixed_passages:?}"))
    };
    assert_eq!(passage("night porter")["page"], 1);
    assert_eq!(passage("night porter")["ocr"], false);
    assert_eq!(passage("Define the flow first")["page"], 2);
    assert_eq!(passage("Define the flow first")["ocr"], true);

    let photo_passages = passages(&app, &entry(documents, "photo.webp")["id"]).await;
    assert_eq!(photo_passages[0]["page"], 1);
    assert_eq!(photo_passages[0]["ocr"], true);
    let stored = app
        .get(
            &format!("/api/documents/{}", entry(documents, "photo.webp")["id"]),
            None,
        )
        .await;
    let document: Value = serde_json::from_slice(&stored.body).unwrap();
    assert_eq!(document["content_type"], "image/webp");
    assert_eq!(document["title"], "photo.webp");

    // Retrieval finds a scanned page's words, on their page.
    let found = app
        .search(&serde_json::json!({"query": "fifty affidavits flagged"}))
        .await;
    let first = &found.json["results"][0];
    assert_eq!(first["document_id"], entry(documents, "scanned.pdf")["id"]);
    assert_eq!(first["page"], 1, "{first}");

    // A turn cites each scan on the page its answer is on.
    let turn = app.chat("Define the flow first, then digitize?").await;
    let done = &turn.last().data;
    assert_eq!(done["path"], "grounded", "{done}");
    let cited_page = |file: &str| {
        done["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|source| source["document_id"] == entry(documents, file)["id"])
            .map(|source| source["page"].clone())
    };
    assert_eq!(
        cited_page("scanned.pdf"),
        Some(serde_json::json!(2)),
        "{done}"
    );
    assert_eq!(
        cited_page("mixed.pdf"),
        Some(serde_json::json!(2)),
        "{done}"
    );
    assert_eq!(
        cited_page("photo.webp"),
        Some(serde_json::json!(1)),
        "{done}"
    );
}

#[actix_web::test]
async fn with_ocr_off_scanned_pages_are_named_as_skipped_and_images_refused() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN), ("BOR_OCR", "off")]).await;
    let reply = upload(
        &app,
        &[
            ("file", "scanned.pdf", &fixture("scanned-report.pdf")),
            ("file", "mixed.pdf", &fixture("mixed-report.pdf")),
            ("file", "photo.webp", &fixture("tex-report-page-2.webp")),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.json);
    let mixed = entry(&reply.json["documents"], "mixed.pdf");
    assert_eq!(mixed["ocr_pages"], 0);
    assert_eq!(
        mixed["skipped_pages"],
        serde_json::json!([{"page": 2, "reason": "it has no text layer, and OCR is off"}])
    );
    let skipped = &reply.json["skipped"];
    assert_eq!(
        entry(skipped, "scanned.pdf")["reason"],
        "no text layer: the PDF's pages hold no text (scanned images need OCR, which is off)"
    );
    assert_eq!(
        entry(skipped, "photo.webp")["reason"],
        "not read: a WebP image is read by OCR, which is off"
    );
}

#[actix_web::test]
async fn the_vision_engine_asks_the_model_to_transcribe_each_page_verbatim() {
    let app = TestApp::spawn_with(&[
        ("BOR_ADMIN_TOKEN", TOKEN),
        ("BOR_OCR", "vision"),
        ("BOR_OCR_MODEL", "vision-model"),
    ])
    .await;
    let reply = upload(
        &app,
        &[
            ("file", "mixed.pdf", &fixture("mixed-report.pdf")),
            ("file", "photo.webp", &fixture("tex-report-page-2.webp")),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.json);
    let documents = &reply.json["documents"];
    assert_eq!(entry(documents, "mixed.pdf")["ocr_pages"], 1, "{documents}");
    assert_eq!(
        entry(documents, "photo.webp")["ocr_pages"],
        1,
        "{documents}"
    );

    let asked: Vec<Value> = app
        .mock
        .chat_requests()
        .into_iter()
        .filter(|request| request["model"] == "vision-model")
        .collect();
    assert_eq!(asked.len(), 2, "one request a scanned page or image");
    let image_urls: Vec<&str> = asked
        .iter()
        .map(|request| {
            assert_eq!(request["stream"], false);
            let system = request["messages"][0]["content"].as_str().unwrap();
            assert!(system.contains("exactly as it is written"), "{system}");
            assert!(system.contains("do not summarise"), "{system}");
            request["messages"][1]["content"][1]["image_url"]["url"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(
        image_urls
            .iter()
            .any(|url| url.starts_with("data:image/jpeg;base64,/9j/")),
        "the scanned page, rendered as JPEG"
    );
    assert!(
        image_urls
            .iter()
            .any(|url| url.starts_with("data:image/webp;base64,UklGR")),
        "the photo, as it is"
    );

    // The model's answer is the page's text, and the passage says it was read by OCR.
    let mixed = passages(&app, &entry(documents, "mixed.pdf")["id"]).await;
    let scanned_page = mixed
        .iter()
        .find(|chunk| chunk["page"] == 2)
        .unwrap_or_else(|| panic!("a passage on page 2: {mixed:?}"));
    assert_eq!(scanned_page["ocr"], true);
    assert_eq!(
        scanned_page["text"], "Mock answer: Transcribe this page verbatim.",
        "the mock model's answer quotes the instruction"
    );
    let typed = mixed.iter().find(|chunk| chunk["page"] == 1).unwrap();
    assert_eq!(typed["ocr"], false);
    assert!(typed["text"].as_str().unwrap().contains("night porter"));
}
