//! OCR's `vision` engine (`BOR_OCR=vision`): each scanned page or image is sent to an
//! OpenAI-compatible vision model (`BOR_OCR_BASE_URL`, else `BOR_LLM_BASE_URL`;
//! `BOR_OCR_MODEL`) as a data URL, with an instruction to transcribe it verbatim; the
//! answer is the page's text. One request a page, no streaming, the whole of it
//! bounded by `BOR_LLM_READ_TIMEOUT`; a failure skips the page with the reason.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::formats::Transcriber;
use crate::config::{Config, Secret};

/// What the model is asked: the words on the page, not a summary of them.
pub const TRANSCRIBE_VERBATIM: &str = "You transcribe scanned pages. Write out every word \
    of the image exactly as it is written, in reading order, keeping its spelling, numbers \
    and punctuation: do not summarise, translate, correct or explain anything, and add \
    nothing of your own. Separate paragraphs with a blank line and put each table row on a \
    line of its own. If the image holds no text, answer with nothing.";

/// Most bytes of a model's answer read.
const MAX_ANSWER_BYTES: usize = 4 << 20;

/// The client of the vision model.
pub struct VisionModel {
    /// `…/chat/completions`.
    url: String,
    model: String,
    api_key: Option<Secret>,
    timeout: Duration,
}

impl VisionModel {
    /// The model `BOR_OCR_MODEL` at `BOR_OCR_BASE_URL` (with `BOR_OCR_API_KEY`), else at
    /// the chat server (with `BOR_LLM_API_KEY`).
    pub fn from_config(config: &Config) -> VisionModel {
        let (base_url, api_key) = match &config.ocr_base_url {
            Some(url) => (url.as_str(), config.ocr_api_key.clone()),
            None => (config.llm_base_url.as_str(), config.llm_api_key.clone()),
        };
        VisionModel {
            url: format!("{base_url}/chat/completions"),
            model: config.ocr_model.clone().unwrap_or_default(),
            api_key,
            timeout: config.llm_read_timeout,
        }
    }

    /// The request for one image.
    fn request(&self, image: &[u8], media_type: &str) -> Value {
        let data = base64::engine::general_purpose::STANDARD.encode(image);
        json!({
            "model": self.model,
            "stream": false,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": TRANSCRIBE_VERBATIM},
                {"role": "user", "content": [
                    {"type": "text", "text": "Transcribe this page verbatim."},
                    {"type": "image_url", "image_url": {"url": format!("data:{media_type};base64,{data}")}},
                ]},
            ],
        })
    }

    async fn post(&self, body: Value) -> Result<String, String> {
        bor_actors::llm::install_tls_provider();
        let client = awc::Client::builder()
            .timeout(self.timeout)
            .disable_redirects()
            .finish();
        let mut request = client.post(&self.url);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key.expose());
        }
        let mut response = request
            .send_json(&body)
            .await
            .map_err(|error| format!("the vision model did not answer ({error})"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("the vision model answered {}", status.as_u16()));
        }
        let answer: Value = response
            .json()
            .limit(MAX_ANSWER_BYTES)
            .await
            .map_err(|error| format!("the vision model's answer is not JSON ({error})"))?;
        answer["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| "the vision model's answer holds no text".to_owned())
    }
}

impl Transcriber for VisionModel {
    /// Blocking (OCR runs on blocking threads): the request runs on a runtime of its own.
    fn transcribe(&self, image: &[u8], media_type: &str) -> Result<String, String> {
        let body = self.request(image, media_type);
        // awc's timeout ends the wait for the answer's head only; this one covers the
        // body too.
        actix_web::rt::System::new().block_on(async {
            tokio::time::timeout(self.timeout, self.post(body))
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "the vision model took longer than {} s",
                        self.timeout.as_secs_f64()
                    ))
                })
        })
    }
}
