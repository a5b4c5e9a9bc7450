//! Reading prose: segmentation, phrases, labels and negation.

use super::{Prose, Wanted};

#[test]
fn sentences_end_at_stops_and_line_breaks_but_not_inside_numbers() {
    let prose = Prose::new("Q1 is $186,000.50. Q2 is 86K!\n- done");
    let sentences: Vec<&str> = prose
        .sentences()
        .iter()
        .map(|span| prose.text()[span.clone()].trim())
        .collect();
    assert_eq!(
        sentences,
        ["q1 is $186,000.50.", "q2 is 86k!", "", "- done"]
    );
}

#[test]
fn phrases_match_whole_words_case_insensitively() {
    let prose = Prose::new("The order is unshipped; it Shipped? SKU-100, SKU-1000");
    assert_eq!(prose.phrase("shipped").len(), 1);
    assert_eq!(prose.phrase("sku-100").len(), 1);
    assert_eq!(
        Prose::new("session_timeout_minutes")
            .phrase("session timeout")
            .len(),
        1
    );
}

#[test]
fn labels_match_the_start_of_a_word() {
    let prose = Prose::new("7 contacts and 12 orders");
    assert_eq!(prose.label("contact").len(), 1);
    assert_eq!(prose.label("tacts").len(), 0);
}

#[test]
fn negation_reaches_four_words_back_within_the_clause() {
    let says = |text: &str, phrase: &str| Prose::new(text).says(phrase, &[]);
    assert!(!says("The order hasn't shipped yet.", "shipped"));
    assert!(!says("It has not been shipped.", "shipped"));
    assert!(!says("The deal is no longer open.", "open"));
    assert!(!says("It has yet to ship.", "ship"));
    assert!(!says("Done, no error.", "error"));
    assert!(says("No, the update failed.", "failed"));
    assert!(says("It shipped on Monday.", "shipped"));
    assert!(says("Not pending: it shipped.", "shipped"));
    assert!(says("I did not stop, and it shipped.", "shipped"));
    assert!(!says("It was not shipped or delivered.", "delivered"));
    assert!(!says("Check whether his invoice is overdue.", "overdue"));
    assert!(!says("It would have been deleted.", "deleted"));
    assert!(says("It was not pending but it shipped.", "shipped"));
}

#[test]
fn a_string_value_is_an_instant_date_time_or_text() {
    assert_eq!(
        Wanted::from_text("2026-01-16T09:00:00+00:00"),
        Wanted::from_text("2026-01-16T09:00:00Z")
    );
    assert!(matches!(Wanted::from_text("2026-01-29"), Wanted::Date(_)));
    assert_eq!(Wanted::from_text("09:30"), Wanted::Time(9 * 3600 + 1800));
    assert_eq!(Wanted::from_text("C-001"), Wanted::Text("C-001".into()));
}

#[test]
fn numbers_in_words_and_digits_both_mention_a_count() {
    let six = Wanted::Number {
        value: 6.0,
        tolerance: None,
    };
    assert_eq!(Prose::new("Six are sellable.").mentions(&six).len(), 1);
    assert_eq!(Prose::new("6 are sellable.").mentions(&six).len(), 1);
    assert!(Prose::new("SKU-600 is low.").mentions(&six).is_empty());
}

#[test]
fn ids_of_one_prefix_are_one_kind() {
    let prose =
        Prose::new("The inventory report is R-002 and the invoice report R-001 (see INV-003).");
    let spans: Vec<&str> = prose
        .spans_of_kind(&Wanted::from_text("R-005"))
        .into_iter()
        .map(|span| &prose.text()[span])
        .collect();
    assert_eq!(spans, ["r-002", "r-001"]);
}

#[test]
fn an_enumeration_holds_the_items_of_its_list_in_any_layout() {
    let items = |text: &str, at: &str| {
        let prose = Prose::new(text);
        let offset = prose.text().find(at).expect("present");
        prose
            .enumeration(offset)
            .into_iter()
            .map(|span| prose.text()[span].to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        items(
            "Tables: orders, invoices (two empty) and audit_log.",
            "orders"
        ),
        ["orders", "invoices", "audit log"]
    );
    assert_eq!(
        items(
            "Here:\n- CRM: contacts, deals\n- ERP: orders\nThat's all.",
            "orders"
        ),
        ["contacts", "deals", "orders"]
    );
    assert_eq!(
        items(
            "| Table | Rows |\n|---|---|\n| orders | 4 |\n| deals | 2 |",
            "deals"
        ),
        ["orders", "deals"]
    );
}
