use super::*;

fn read(html: &str) -> ExtractedDocument {
    HtmlReader
        .read(html.as_bytes(), &Limits::default())
        .expect("reads")
}

#[test]
fn only_visible_content_text_is_kept() {
    let page = r##"<!doctype html><html><head><title>The &amp; Page</title>
        <style>p { color: red }</style><script>var hidden = "script";</script></head>
        <body><header><a href="/">Site name</a></header>
        <nav><ul><li>Home</li></ul></nav>
        <div role="search"><form><input value="q"><button>Search</button></form></div>
        <h1>Guide<a class="headerlink" href="#g">¶</a></h1>
        <p>Visible &eacute;t&eacute; text, <span hidden>hidden</span><span style="display: none">gone</span>kept.</p>
        <template><p>template</p></template><aside>aside</aside>
        <ul><li>one<li>two</ul>
        <table><tr><th>Kind<th>Years</tr><tr><td>Invoices<td>10</table>
        <pre>line one
  # line two</pre>
        <footer>Copyright</footer></body></html>"##;
    let document = read(page);
    assert_eq!(document.title.as_deref(), Some("The & Page"));
    assert_eq!(
        document.text,
        "# Guide\n\nVisible été text, kept.\n\n- one\n- two\n\nKind | Years\nInvoices | 10\n\n```\nline one\n  # line two\n```\n"
    );
}

#[test]
fn the_main_content_is_kept_alone_when_the_page_marks_it() {
    let document = read(
        "<body><div class=sidebar>Sidebar links</div><div role=main><h2>Topic</h2><p>Body</p>\
         <article><header><h3>Post</h3></header><footer>By Ada</footer></article></div>\
         <div>Related pages</div></body>",
    );
    assert_eq!(document.text, "## Topic\n\nBody\n\n### Post\n\nBy Ada\n");
    assert_eq!(document.title.as_deref(), Some("Topic"));
}

#[test]
fn a_declared_charset_is_honoured() {
    let bytes =
        b"<html><head><meta charset=\"windows-1252\"></head><body><p>Caf\xE9</p></body></html>";
    let document = HtmlReader.read(bytes, &Limits::default()).expect("reads");
    assert_eq!(document.text, "Café\n");
}

#[test]
fn links_are_read_in_page_order_with_the_base() {
    let page = r#"<!doctype html><html><head><base href="/docs/"><title>T</title></head>
        <body><a href=" guide.html ">Guide</a><p><a name="x">no href</a>
        <map><area href="/map"></map><a href="https://other.example/">Out</a>
        <link href="/style.css"></body></html>"#;
    let links = links(page.as_bytes(), &Limits::default()).expect("reads");
    assert_eq!(links.base.as_deref(), Some("/docs/"));
    assert_eq!(
        links.hrefs,
        ["guide.html", "/map", "https://other.example/"]
    );
    let deep = "<div>".repeat(Limits::default().max_depth + 10);
    assert!(super::links(deep.as_bytes(), &Limits::default()).is_err());
}
