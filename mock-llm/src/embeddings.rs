//! `POST /v1/embeddings`: deterministic feature-hashing embeddings.
//!
//! Each lowercased word that is not a stop word adds ±1 to the dimension its hash picks
//! (the sign comes from the hash too, so collisions cancel out on average); the vector is
//! then L2-normalised. Texts that share words point the same way, the same text always
//! gives the same vector, and a text without words gets a fixed unit vector.

use serde_json::{Value, json};

use crate::config::Config;
use crate::directive::{self, Directive, Endpoint};
use crate::reply::{Reply, Response};
use crate::text::{fnv1a, words};
use crate::wire;

/// Common English words that carry no topic; leaving them out makes a short question
/// land close to the passages about its subject.
pub(crate) const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "is", "it", "of", "on", "or", "that", "the", "this", "to", "was", "what", "when",
    "where", "which", "who", "why", "with", "you",
];

/// The embedding of `text`: a unit vector with `dim` components.
pub(crate) fn embed(text: &str, dim: usize) -> Vec<f32> {
    let words: Vec<String> = words(text)
        .into_iter()
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
        .collect();
    let mut vector = vec![0.0_f32; dim];
    for word in &words {
        let hash = fnv1a(word.as_bytes());
        // The low bits pick the dimension, the top bit the sign.
        let index = usize::try_from(hash % dim as u64).unwrap_or_default();
        vector[index] += if hash >> 63 == 0 { 1.0 } else { -1.0 };
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    } else {
        let uniform = 1.0 / (dim as f32).sqrt();
        vector.iter_mut().for_each(|x| *x = uniform);
    }
    vector
}

/// What llama-cpp-python answers (HTTP 500) to an embeddings request for a model
/// loaded without embeddings.
const NO_EMBEDDINGS: &str = "Llama model must be created with embedding=True to call this method";

pub(crate) fn respond(config: &Config, body: &Value, attempt: u32) -> Response {
    if !config.embeddings {
        return Reply::error(500, NO_EMBEDDINGS).into();
    }
    let inputs: Vec<&str> = match body.get("input") {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).collect()
        }
        _ => return Reply::error(400, "`input` must be a string or an array of strings").into(),
    };
    let mut directive = None;
    for input in &inputs {
        match Directive::find(input) {
            Ok(None) => {}
            Ok(found) => {
                directive = found;
                break;
            }
            Err(problem) => return Reply::error(400, problem).into(),
        }
    }
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(&config.embed_model);
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, input)| {
            let vector = embed(&directive::strip(input), config.embedding_dim);
            json!({"object": "embedding", "index": index, "embedding": vector})
        })
        .collect();
    let prompt_tokens: usize = inputs.iter().map(|input| words(input).len()).sum();
    let answer = Reply::json(
        200,
        &json!({
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
        }),
    );
    match directive {
        None => answer.into(),
        Some(directive) => wire::shape(&directive, Endpoint::Embeddings, attempt, answer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn vectors_are_unit_length_and_deterministic() {
        for text in [
            "What is bor?",
            "",
            "!!!",
            "the",
            "A long text about many different things",
        ] {
            let vector = embed(text, 64);
            assert_eq!(vector.len(), 64);
            let norm = cosine(&vector, &vector).sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{text}: {norm}");
            assert_eq!(vector, embed(text, 64));
        }
    }

    #[test]
    fn texts_without_words_share_a_fixed_vector() {
        assert_eq!(embed("", 16), embed("?! --", 16));
    }

    #[test]
    fn related_texts_are_closer_than_unrelated_ones() {
        let question = embed("How do I reset the router password?", 64);
        let related = embed(
            "To reset the password of your router, hold the reset button.",
            64,
        );
        let unrelated = embed("Sourdough bread needs flour, water, salt and patience.", 64);
        assert!(cosine(&question, &related) > cosine(&question, &unrelated) + 0.3);
    }
}
