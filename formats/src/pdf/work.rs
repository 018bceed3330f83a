//! Bounds the work of reading a page before pdf-extract reads it.
//!
//! Each content stream the page draws (its own, and the forms it draws with `Do`,
//! nested) is cut down to its text operations ([`content`](super::content)), and
//! those are counted, a form each time it is drawn: past
//! [`Limits::max_operators_at_once`] for one page (pdf-extract holds the decoded
//! operators of a page and of the forms it is drawing) or [`Limits::max_operators`]
//! for the whole file, the file is refused before anything is decoded. A form that
//! draws itself, or forms nested deeper than [`Limits::max_depth`], are refused too
//! (pdf-extract would recurse without end). The cut-down streams stand in for the
//! page's streams while pdf-extract reads the page, and the originals are put back
//! after, so only one page's worth is held at a time. An image drawn with `Do` is
//! given empty content: pdf-extract would decode its pixels as operators.

use std::collections::HashMap;

use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream};

use super::KIND;
use super::content::{TextOperations, text_operations};
use crate::{Limits, ReadError};

/// What drawing a stream costs: its text operators and their bytes, forms included
/// each time they are drawn, and the most operators decoded at one time.
#[derive(Debug, Default, Clone, Copy)]
struct Cost {
    operators: usize,
    bytes: u64,
    at_once: usize,
}

/// The work of the pages read so far.
pub(super) struct Work<'a> {
    limits: &'a Limits,
    operators: usize,
    bytes: u64,
}

/// The objects a page's cut-down streams replaced, to put back after the page.
pub(super) struct Replaced(Vec<(ObjectId, Object)>);

impl<'a> Work<'a> {
    pub(super) fn new(limits: &'a Limits) -> Work<'a> {
        Work {
            limits,
            operators: 0,
            bytes: 0,
        }
    }

    /// Counts the page's work against the bounds and puts its cut-down streams in place.
    pub(super) fn prepare_page(
        &mut self,
        document: &mut Document,
        page: ObjectId,
    ) -> Result<Replaced, ReadError> {
        let mut walk = PageWalk {
            document,
            limits: self.limits,
            streams: HashMap::new(),
            costs: HashMap::new(),
            drawing: Vec::new(),
        };
        let contents = document.get_page_contents(page);
        let resources = document
            .get_dictionary(page)
            .ok()
            .and_then(|page| inherited_resources(document, page, self.limits.max_depth));
        let cost = walk.cost(&contents, resources)?;
        if cost.at_once > self.limits.max_operators_at_once {
            return Err(ReadError::PageTooBusy(self.limits.max_operators_at_once));
        }
        self.operators = self.operators.saturating_add(cost.operators);
        self.bytes = self.bytes.saturating_add(cost.bytes);
        if self.operators > self.limits.max_operators {
            return Err(ReadError::TooManyOperators(self.limits.max_operators));
        }
        if self.bytes > self.limits.max_unpacked_bytes {
            return Err(self.limits.unpacked_too_large());
        }
        let streams = walk.streams;
        let mut replaced = Vec::with_capacity(streams.len());
        for (id, operations) in streams {
            let Some(Object::Stream(original)) = document.objects.get(&id) else {
                continue;
            };
            let mut cut = Stream::new(original.dict.clone(), Vec::new());
            cut.set_plain_content(operations.map_or_else(Vec::new, |kept| kept.content));
            if let Some(original) = document.objects.insert(id, Object::Stream(cut)) {
                replaced.push((id, original));
            }
        }
        Ok(Replaced(replaced))
    }
}

impl Replaced {
    /// Puts the page's own streams back.
    pub(super) fn restore(self, document: &mut Document) {
        for (id, original) in self.0 {
            document.objects.insert(id, original);
        }
    }
}

struct PageWalk<'a> {
    document: &'a Document,
    limits: &'a Limits,
    /// The text operations of each stream the page draws; `None` for an image.
    streams: HashMap<ObjectId, Option<TextOperations>>,
    /// The cost of each form, by the form and the resources its names are looked up in.
    costs: HashMap<(ObjectId, usize), Cost>,
    /// The forms being drawn, outermost first.
    drawing: Vec<ObjectId>,
}

impl<'a> PageWalk<'a> {
    /// The cost of drawing `ids` (one content, in parts) with `resources`.
    fn cost(
        &mut self,
        ids: &[ObjectId],
        resources: Option<&'a Dictionary>,
    ) -> Result<Cost, ReadError> {
        let mut cost = Cost::default();
        let mut drawn = Vec::new();
        for &id in ids {
            let Ok(stream) = self.document.get_object(id).and_then(Object::as_stream) else {
                continue;
            };
            let bound = self.limits.max_operators_at_once;
            let operations = self.streams.entry(id).or_insert_with(|| {
                Some(match stream.decompressed_content() {
                    Ok(content) => text_operations(&content, bound),
                    Err(_) => text_operations(&stream.content, bound),
                })
            });
            if let Some(operations) = operations {
                cost.operators += operations.operators;
                cost.bytes += operations.content.len() as u64;
                drawn.extend(operations.drawn.iter().cloned());
            }
        }
        let own = cost.operators;
        if own > self.limits.max_operators_at_once {
            return Err(ReadError::PageTooBusy(self.limits.max_operators_at_once));
        }
        let mut deepest = 0;
        for name in drawn {
            let Some((form, stream)) = self.drawn_stream(resources, &name) else {
                continue;
            };
            if !matches!(
                stream.dict.get(b"Subtype").and_then(Object::as_name),
                Ok(b"Form")
            ) {
                self.streams.insert(form, None);
                continue;
            }
            let form_resources = stream
                .dict
                .get(b"Resources")
                .ok()
                .and_then(|resources| resolve(self.document, resources).as_dict().ok())
                .or(resources);
            let key = (
                form,
                form_resources.map_or(0, |r| std::ptr::from_ref(r) as usize),
            );
            let form_cost = match self.costs.get(&key) {
                Some(known) => *known,
                None => {
                    if self.drawing.contains(&form) {
                        return Err(ReadError::malformed(
                            KIND,
                            "a form on its pages draws itself, so the page would be drawn without end",
                        ));
                    }
                    if self.drawing.len() >= self.limits.max_depth {
                        return Err(ReadError::TooDeep(self.limits.max_depth));
                    }
                    self.drawing.push(form);
                    let form_cost = self.cost(&[form], form_resources)?;
                    self.drawing.pop();
                    self.costs.insert(key, form_cost);
                    form_cost
                }
            };
            cost.operators = cost.operators.saturating_add(form_cost.operators);
            cost.bytes = cost.bytes.saturating_add(form_cost.bytes);
            deepest = deepest.max(form_cost.at_once);
            if cost.operators > self.limits.max_operators {
                return Err(ReadError::TooManyOperators(self.limits.max_operators));
            }
        }
        cost.at_once = own.saturating_add(deepest);
        Ok(cost)
    }

    /// The stream `/name Do` draws with `resources`, as pdf-extract looks it up.
    fn drawn_stream(
        &self,
        resources: Option<&'a Dictionary>,
        name: &[u8],
    ) -> Option<(ObjectId, &'a Stream)> {
        let xobjects = resolve(self.document, resources?.get(b"XObject").ok()?)
            .as_dict()
            .ok()?;
        let id = xobjects.get(name).ok()?.as_reference().ok()?;
        let stream = self.document.get_object(id).ok()?.as_stream().ok()?;
        Some((id, stream))
    }
}

/// The object a reference points to, or the object itself.
fn resolve<'a>(document: &'a Document, object: &'a Object) -> &'a Object {
    match object {
        Object::Reference(id) => document.get_object(*id).unwrap_or(object),
        other => other,
    }
}

/// The page's Resources, from the page or the nearest node above it that has them.
fn inherited_resources<'a>(
    document: &'a Document,
    page: &'a Dictionary,
    max_depth: usize,
) -> Option<&'a Dictionary> {
    let mut node = page;
    for _ in 0..max_depth {
        if let Ok(resources) = node.get(b"Resources") {
            return resolve(document, resources).as_dict().ok();
        }
        node = resolve(document, node.get(b"Parent").ok()?)
            .as_dict()
            .ok()?;
    }
    None
}
