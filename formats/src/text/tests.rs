use super::*;

#[test]
fn blocks_are_separated_by_blank_lines_and_lines_are_not() {
    let mut text = MarkdownText::new(1 << 20);
    text.heading(2, "  Fees \n").expect("fits");
    text.paragraph("Pay   at\nthe desk.").expect("fits");
    text.line("Copy | 0.20").expect("fits");
    text.line("Scan | 1.50").expect("fits");
    text.end_lines();
    text.line("- first").expect("fits");
    text.paragraph("# not a heading").expect("fits");
    let document = text.finish(None, "text/html").expect("has text");
    assert_eq!(
        document.text,
        "## Fees\n\nPay at the desk.\n\nCopy | 0.20\nScan | 1.50\n\n- first\n\n\\# not a heading\n"
    );
    assert_eq!(
        document.title.as_deref(),
        Some("Fees"),
        "the first heading, for want of a title"
    );
}

#[test]
fn pages_start_where_their_first_text_does() {
    let mut text = MarkdownText::new(1 << 20);
    text.start_page();
    text.paragraph("one").expect("fits");
    text.start_page();
    text.start_page();
    text.paragraph("three").expect("fits");
    text.start_page();
    let document = text
        .finish(Some(" The  Title ".to_owned()), "application/pdf")
        .expect("has text");
    assert_eq!(document.text, "one\n\nthree\n");
    assert_eq!(document.page_starts, vec![0, 5, 5, 11]);
    assert_eq!(document.title.as_deref(), Some("The Title"));
    assert_eq!(document.page_at(0), Some(1));
    assert_eq!(document.page_at(6), Some(3));
}

#[test]
fn code_keeps_its_lines_inside_a_fence_longer_than_any_in_it() {
    let mut text = MarkdownText::new(1 << 20);
    text.code("# a comment\n``` nested\n").expect("fits");
    let document = text.finish(None, "text/html").expect("has text");
    assert_eq!(document.text, "````\n# a comment\n``` nested\n````\n");
}

#[test]
fn the_text_bound_and_emptiness_are_errors() {
    let mut text = MarkdownText::new(10);
    assert!(matches!(
        text.paragraph("far more than ten bytes"),
        Err(ReadError::TooLarge(_))
    ));
    assert_eq!(
        MarkdownText::new(10).finish(None, "text/html"),
        Err(ReadError::Empty)
    );
}

#[test]
fn control_characters_but_whitespace_are_dropped_from_every_piece_and_the_title() {
    let mut text = MarkdownText::new(1 << 20);
    text.heading(1, "Fe\0es").expect("fits");
    text.paragraph("Pay\u{4} at\tthe desk.\0").expect("fits");
    text.line("Copy\0 | 0.20").expect("fits");
    text.end_lines();
    text.code("let a = 1;\0\n\tlet b = 2;").expect("fits");
    let document = text
        .finish(Some("The\0 Title\u{1b}".to_owned()), "text/html")
        .expect("has text");
    assert_eq!(
        document.text,
        "# Fees\n\nPay at the desk.\n\nCopy | 0.20\n\n```\nlet a = 1;\n\tlet b = 2;\n```\n"
    );
    assert_eq!(document.title.as_deref(), Some("The Title"));
}
