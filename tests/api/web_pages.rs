//! `bor import https://…` against a local web server the test starts: pages,
//! redirects, validators, sitemaps, robots.txt, slow and endless bodies, and the
//! addresses refused without `BOR_FETCH_ALLOW_PRIVATE`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::http::header;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use bor::db::schema::page_validators;
use bor::import::pages::{PageListener, PageReport, import_address};
use bor::knowledge::ingest::{IngestOutcome, Unobserved};
use bor::testing::TestDatabase;
use bor::web::{AddressPolicy, FetchSettings, Fetcher};
use bor_mock_llm::MockLlm;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::stream;

use crate::import::{ingestor, stored};
use crate::support::TestApp;

const ADMIN_TOKEN: &str = "admin-web-pages-5521";

/// How the test site offers its pages to a crawl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SiteMap {
    /// `robots.txt` names a sitemap of three pages.
    Listed,
    /// No sitemap: links only.
    None,
    /// `robots.txt` names a sitemap of a million entries, sent as it is read.
    Huge,
}

/// A web server on 127.0.0.1, with how often it sent the body of `/page.html` and how
/// many requests it answered.
struct Site {
    address: SocketAddr,
    page_bodies: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
}

impl Site {
    async fn start(map: SiteMap) -> Site {
        let page_bodies = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let (bodies, counted) = (Arc::clone(&page_bodies), Arc::clone(&requests));
        let server = HttpServer::new(move || {
            let (bodies, counted) = (Arc::clone(&bodies), Arc::clone(&counted));
            App::new().default_service(web::to(move |request: HttpRequest| {
                counted.fetch_add(1, Ordering::SeqCst);
                let bodies = Arc::clone(&bodies);
                async move { answer(&request, map, &bodies).await }
            }))
        })
        .workers(1)
        .bind(("127.0.0.1", 0))
        .expect("a local port");
        let address = server.addrs()[0];
        actix_web::rt::spawn(server.run());
        Site {
            address,
            page_bodies,
            requests,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }
}

fn html(title: &str, body: &str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
        ))
}

fn redirect(to: &str) -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, to.to_owned()))
        .finish()
}

async fn answer(request: &HttpRequest, map: SiteMap, page_bodies: &AtomicUsize) -> HttpResponse {
    let path = request.path();
    if let Some(hop) = path.strip_prefix("/hop/") {
        let next = hop.parse::<u32>().unwrap_or(0) + 1;
        return redirect(&format!("/hop/{next}"));
    }
    match path {
        "/page.html" => {
            let etag = "\"owls-1\"";
            let asked = request.headers().get(header::IF_NONE_MATCH);
            if asked.is_some_and(|value| value == etag) {
                return HttpResponse::NotModified().finish();
            }
            page_bodies.fetch_add(1, Ordering::SeqCst);
            let mut page = html("Owls", "<p>Owls hunt at night and sleep by day.</p>");
            page.headers_mut()
                .insert(header::ETAG, etag.parse().unwrap());
            page
        }
        "/notes.txt" => HttpResponse::Ok()
            .content_type("text/plain")
            .body("Bats sleep upside down."),
        "/moved" => redirect("/page.html"),
        "/loop-a" => redirect("/loop-b"),
        "/loop-b" => redirect("/loop-a"),
        "/image.png" => HttpResponse::Ok()
            .content_type("image/png")
            .body(&b"\x89PNG\r\n\x1a\n"[..]),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            html("Slow", "<p>Late.</p>")
        }
        "/endless" => HttpResponse::Ok()
            .content_type("text/html")
            .streaming(stream::repeat_with(|| {
                Ok::<_, actix_web::Error>(web::Bytes::from_static(&[b'a'; 8192]))
            })),
        "/to" => {
            let to = request.query_string().strip_prefix("url=").unwrap_or("/");
            redirect(to)
        }
        "/robots.txt" => {
            let sitemap = match map {
                SiteMap::Listed => "Sitemap: /sitemap.xml\n",
                SiteMap::Huge => "Sitemap: /huge.xml\n",
                SiteMap::None => "",
            };
            let base = format!("http://{}", request.connection_info().host());
            HttpResponse::Ok().content_type("text/plain").body(format!(
                "User-agent: *\nDisallow: /private/\n{}",
                sitemap
                    .replace("/sitemap", &format!("{base}/sitemap"))
                    .replace("/huge", &format!("{base}/huge"))
            ))
        }
        "/sitemap.xml" if map == SiteMap::Listed => {
            let base = format!("http://{}", request.connection_info().host());
            HttpResponse::Ok().content_type("application/xml").body(format!(
                "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                 <url><loc>{base}/a.html</loc></url><url><loc>{base}/private/c.html</loc></url>\
                 <url><loc>{base}/b.html</loc></url><url><loc>http://other.example/x.html</loc></url></urlset>"
            ))
        }
        "/huge.xml" if map == SiteMap::Huge => {
            let base = format!("http://{}", request.connection_info().host());
            let head = stream::once(async {
                Ok::<_, actix_web::Error>(web::Bytes::from_static(b"<urlset>"))
            });
            let entries = stream::iter((0..1_000_000).map(move |n| {
                let page = ["a", "b", "d"][n % 3];
                Ok(web::Bytes::from(format!(
                    "<url><loc>{base}/{page}.html?n={n}</loc></url>"
                )))
            }));
            HttpResponse::Ok()
                .content_type("application/xml")
                .streaming(futures_util::StreamExt::chain(head, entries))
        }
        "/" => html(
            "Home",
            "<p>The home page.</p><a href=\"a.html\">A</a> <a href=\"/b.html#part\">B</a> \
             <a href=\"/private/c.html\">C</a> <a href=\"http://other.example/\">Out</a>",
        ),
        "/a.html" => html("Alpha", "<p>Alpha page.</p><a href=\"/d.html\">D</a>"),
        "/b.html" => html("Beta", "<p>Beta page.</p><a href=\"/\">Home</a>"),
        "/d.html" => html("Delta", "<p>Delta page.</p>"),
        "/private/c.html" => html("Private", "<p>Not for robots.</p>"),
        _ => HttpResponse::NotFound().body("not here"),
    }
}

/// Every report, in order.
#[derive(Default)]
struct Reports(Vec<PageReport>);

impl PageListener for Reports {
    fn page(&mut self, report: PageReport) {
        self.0.push(report);
    }
}

impl Reports {
    fn stored_urls(&self) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|report| match report {
                PageReport::Stored { url, .. } => Some(url.clone()),
                _ => None,
            })
            .collect()
    }

    fn reason_for(&self, wanted: &str) -> String {
        self.0
            .iter()
            .find_map(|report| match report {
                PageReport::Skipped { url, reason } if url == wanted => Some(reason.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{wanted} is not skipped: {:?}", self.0))
    }
}

fn settings(allow_private: bool) -> FetchSettings {
    FetchSettings {
        addresses: AddressPolicy {
            allow_private,
            allowed: Vec::new(),
        },
        max_bytes: 256 * 1024,
        timeout: Duration::from_secs(2),
        ocr: bor::knowledge::formats::Ocr::default(),
    }
}

async fn import_all(
    db: &TestDatabase,
    mock: &MockLlm,
    settings: FetchSettings,
    urls: &[String],
    crawl: Option<usize>,
) -> Reports {
    let ingestor = ingestor(db, mock);
    let fetcher = Fetcher::new(settings);
    let mut reports = Reports::default();
    for url in urls {
        import_address(&ingestor, &fetcher, url, crawl, &Unobserved, &mut reports)
            .await
            .expect("the database and the LLM server answer");
    }
    reports
}

#[actix_web::test]
async fn a_page_is_stored_under_its_url_and_not_read_again_while_unchanged() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let site = Site::start(SiteMap::None).await;
    let (page, text) = (site.url("/page.html"), site.url("/notes.txt"));
    let first = import_all(
        &db,
        &mock,
        settings(true),
        &[page.clone(), text.clone()],
        None,
    )
    .await;
    assert!(
        matches!(&first.0[0], PageReport::Stored { url, title, outcome: IngestOutcome::Created { .. } }
            if *url == page && title == "Owls"),
        "{:?}",
        first.0
    );
    assert!(
        matches!(&first.0[1], PageReport::Stored { title, .. } if *title == text),
        "a page without a title is named by its URL: {:?}",
        first.0
    );
    let sources: Vec<Option<String>> = stored(&db).await.into_iter().map(|d| d.2).collect();
    assert_eq!(sources, [Some(page.clone()), Some(text)]);
    let etags: Vec<Option<String>> = page_validators::table
        .select(page_validators::etag)
        .load(&mut db.connect().await)
        .await
        .unwrap();
    assert_eq!(etags, [Some("\"owls-1\"".to_owned())]);

    let again = import_all(
        &db,
        &mock,
        settings(true),
        std::slice::from_ref(&page),
        None,
    )
    .await;
    assert!(
        matches!(&again.0[0], PageReport::NotModified { url, chunks: 1, .. } if *url == page),
        "{:?}",
        again.0
    );
    assert_eq!(
        AtomicUsize::load(&site.page_bodies, Ordering::SeqCst),
        1,
        "sent once"
    );

    let moved = site.url("/moved");
    let redirected = import_all(
        &db,
        &mock,
        settings(true),
        std::slice::from_ref(&moved),
        None,
    )
    .await;
    assert!(
        matches!(
            &redirected.0[0],
            PageReport::Stored {
                outcome: IngestOutcome::Unchanged { .. },
                ..
            }
        ),
        "a redirect to the same page finds the same text: {:?}",
        redirected.0
    );
}

#[actix_web::test]
async fn pages_that_cannot_be_imported_are_named_with_their_reason_and_nothing_is_stored() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let site = Site::start(SiteMap::None).await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let unreachable = format!("http://127.0.0.1:{closed}/");
    let urls = [
        site.url("/missing"),
        site.url("/image.png"),
        site.url("/loop-a"),
        site.url("/hop/0"),
        site.url("/slow"),
        site.url("/endless"),
        unreachable.clone(),
        "ftp://example.com/file.txt".to_owned(),
    ];
    let reports = import_all(&db, &mock, settings(true), &urls, None).await;
    for (url, reason) in [
        (site.url("/missing"), "the server answered HTTP 404"),
        (site.url("/image.png"), "not a kind bor reads (image/png;"),
        (site.url("/loop-a"), "a redirect loop (back to "),
        (site.url("/hop/0"), "more than 5 redirects"),
        (site.url("/slow"), "no complete answer within 2 s"),
        (
            site.url("/endless"),
            "larger than the 262144 bytes allowed (BOR_MAX_UPLOAD_BYTES)",
        ),
        (unreachable, "unreachable ("),
        ("ftp://example.com/file.txt".to_owned(), "not a web address"),
    ] {
        let said = reports.reason_for(&url);
        assert!(said.starts_with(reason), "{url}: {said}");
    }
    assert_eq!(reports.0.len(), urls.len());
    assert!(stored(&db).await.is_empty(), "nothing half-stored");
}

#[actix_web::test]
async fn a_crawl_reads_the_sitemap_and_honours_robots_txt() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let site = Site::start(SiteMap::Listed).await;
    let reports = import_all(&db, &mock, settings(true), &[site.url("/")], Some(10)).await;
    assert_eq!(
        reports.stored_urls(),
        [site.url("/a.html"), site.url("/b.html")],
        "the sitemap's same-site pages, not the links: {:?}",
        reports.0
    );
    assert_eq!(
        reports.reason_for(&site.url("/private/c.html")),
        "robots.txt does not allow it"
    );
}

#[actix_web::test]
async fn without_a_sitemap_a_crawl_follows_same_site_links_breadth_first_up_to_n_pages() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let site = Site::start(SiteMap::None).await;
    let two = import_all(&db, &mock, settings(true), &[site.url("/")], Some(2)).await;
    assert_eq!(two.stored_urls(), [site.url("/"), site.url("/a.html")]);
    let reports = import_all(&db, &mock, settings(true), &[site.url("/")], Some(10)).await;
    assert_eq!(
        reports.stored_urls(),
        [
            site.url("/"),
            site.url("/a.html"),
            site.url("/b.html"),
            site.url("/d.html")
        ],
        "the links of the first page before those of the second: {:?}",
        reports.0
    );
    assert_eq!(
        reports.reason_for(&site.url("/private/c.html")),
        "robots.txt does not allow it"
    );
    assert_eq!(stored(&db).await.len(), 4, "other sites are not followed");
}

#[actix_web::test]
async fn a_sitemap_of_a_million_entries_is_read_only_up_to_the_pages_asked_for() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let site = Site::start(SiteMap::Huge).await;
    let reports = import_all(&db, &mock, settings(true), &[site.url("/")], Some(4)).await;
    assert_eq!(
        reports.stored_urls(),
        [
            site.url("/a.html?n=0"),
            site.url("/b.html?n=1"),
            site.url("/d.html?n=2"),
            site.url("/a.html?n=3")
        ],
        "{:?}",
        reports.0
    );
}

#[actix_web::test]
async fn private_addresses_are_refused_by_literal_by_name_and_after_a_redirect() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let (entry, inside) = (
        Site::start(SiteMap::None).await,
        Site::start(SiteMap::None).await,
    );
    let by_literal = inside.url("/page.html");
    let by_name = format!("http://localhost:{}/page.html", inside.address.port());
    let to_inside = entry.url(&format!("/to?url={by_literal}"));
    let to_metadata = entry.url("/to?url=http://169.254.169.254/latest/meta-data/");
    // The entry server is let through, as a public server would be; what it points at is not.
    let mut refusing = settings(false);
    refusing.addresses.allowed = vec![entry.address];
    let urls = [
        by_literal.clone(),
        by_name.clone(),
        to_inside.clone(),
        to_metadata.clone(),
        "http://10.1.2.3/".to_owned(),
    ];
    let reports = import_all(&db, &mock, refusing, &urls, None).await;
    let port = inside.address.port();
    for (url, reason) in [
        (
            by_literal,
            "127.0.0.1 is 127.0.0.1, a loopback address: refused (set BOR_FETCH_ALLOW_PRIVATE=true to allow it)".to_owned(),
        ),
        (
            by_name,
            "localhost is 127.0.0.1, a loopback address: refused".to_owned(),
        ),
        (
            to_inside,
            "127.0.0.1 is 127.0.0.1, a loopback address: refused".to_owned(),
        ),
        (
            to_metadata,
            "169.254.169.254 is 169.254.169.254, a link-local address: refused".to_owned(),
        ),
        (
            "http://10.1.2.3/".to_owned(),
            "10.1.2.3 is 10.1.2.3, a private address: refused".to_owned(),
        ),
    ] {
        let said = reports.reason_for(&url);
        assert!(said.starts_with(&reason), "{url}: {said} (port {port})");
    }
    assert_eq!(
        AtomicUsize::load(&inside.requests, Ordering::SeqCst),
        0,
        "never reached"
    );
    assert_eq!(
        AtomicUsize::load(&entry.requests, Ordering::SeqCst),
        2,
        "the two redirects"
    );
    assert!(stored(&db).await.is_empty());
}

#[actix_web::test]
async fn bor_import_fetches_a_page_only_when_private_addresses_are_allowed() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let site = Site::start(SiteMap::None).await;
    let page = site.url("/page.html");
    let import = |allow: &str| {
        let page = page.clone();
        let (url, base) = (db.url().to_owned(), mock.base_url());
        let allow = allow.to_owned();
        // The server runs on this thread's system: the command waits on another.
        std::thread::spawn(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_bor"))
                .args(["import", &page])
                .current_dir(std::env::temp_dir())
                .env("BOR_DATABASE_URL", url)
                .env("BOR_LLM_BASE_URL", base)
                .env("BOR_FETCH_ALLOW_PRIVATE", allow)
                .env("BOR_LOG", "warn")
                .output()
                .unwrap()
        })
    };
    let wait = |thread: std::thread::JoinHandle<std::process::Output>| async move {
        loop {
            if thread.is_finished() {
                return thread.join().unwrap();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let refused = wait(import("false")).await;
    let shown = String::from_utf8_lossy(&refused.stdout).into_owned();
    assert!(
        shown.contains(&format!(
            "skipped   {page}: 127.0.0.1 is 127.0.0.1, a loopback address: refused"
        )),
        "{shown}"
    );
    let allowed = wait(import("true")).await;
    let shown = String::from_utf8_lossy(&allowed.stdout).into_owned();
    assert!(allowed.status.success(), "{shown}");
    assert!(
        shown.contains(&format!("imported  {page} (1 chunks)")),
        "{shown}"
    );
    assert!(shown.contains("imported 1, unchanged 0"), "{shown}");
}

#[actix_web::test]
async fn add_from_url_stores_a_page_the_index_finds_and_lists_what_it_skipped() {
    let site = Site::start(SiteMap::None).await;
    let app = TestApp::spawn_with(&[
        ("BOR_ADMIN_TOKEN", ADMIN_TOKEN),
        ("BOR_FETCH_ALLOW_PRIVATE", "true"),
    ])
    .await;
    let page = site.url("/page.html");
    let added = app
        .post_url(Some(ADMIN_TOKEN), &serde_json::json!({ "url": page }))
        .await;
    assert_eq!(added.status, 200, "{}", added.json);
    let stored = &added.json["documents"][0];
    assert_eq!(stored["url"], page.as_str());
    assert_eq!(stored["title"], "Owls");
    assert_eq!(stored["status"], "imported");
    let id = stored["id"].as_i64().unwrap();
    assert_eq!(app.indexed_chunks(id), 1, "the index has it at once");
    let passages = app.get(&format!("/api/documents/{id}"), None).await;
    assert_eq!(
        passages.json()["source"],
        page.as_str(),
        "its URL is its source"
    );

    let again = app
        .post_url(Some(ADMIN_TOKEN), &serde_json::json!({ "url": page }))
        .await;
    assert_eq!(again.json["documents"][0]["status"], "unchanged");
    assert_eq!(AtomicUsize::load(&site.page_bodies, Ordering::SeqCst), 1);

    let crawled = app
        .post_url(
            Some(ADMIN_TOKEN),
            &serde_json::json!({ "url": site.url("/"), "crawl": 10 }),
        )
        .await;
    assert_eq!(crawled.status, 200, "{}", crawled.json);
    assert_eq!(crawled.json["documents"].as_array().unwrap().len(), 4);
    assert_eq!(
        crawled.json["skipped"],
        serde_json::json!([{ "url": site.url("/private/c.html"), "reason": "robots.txt does not allow it" }])
    );

    for (body, message) in [
        (serde_json::json!({ "url": " " }), "`url` is empty"),
        (
            serde_json::json!({ "url": page, "crawl": 0 }),
            "`crawl` must be from 1 to 100000",
        ),
    ] {
        let refused = app.post_url(Some(ADMIN_TOKEN), &body).await;
        assert_eq!(refused.status, 400, "{}", refused.json);
        assert_eq!(refused.error_code(), "invalid_json");
        assert_eq!(refused.json["error"]["message"], message);
    }
    let anonymous = app
        .post_url(None, &serde_json::json!({ "url": page }))
        .await;
    assert_eq!(anonymous.status, 401);
}
