//! OAuth as an MCP client and its person go through it (docs/MCP.md, "OAuth"): a
//! client registered, the consent page read and answered with the session cookie, the
//! code exchanged with its PKCE verifier.

use serde_json::{Value, json};

use super::{Reply, STREAM_TIMEOUT, TestApp};

/// A PKCE verifier, and its S256 challenge.
pub const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K1qkddgHhjA_8kW5G9ZdIsk5Ic";
pub const CHALLENGE: &str = "d4RF7PMn49N_QfDUzgoWZO31EsKhRUNbpVlCGIeccFU";
/// Where the clients of these tests say they listen.
pub const REDIRECT_URI: &str = "http://127.0.0.1:33418/callback";

/// A registered client: its id, and its secret when it is confidential.
#[derive(Debug, Clone)]
pub struct OAuthClient {
    pub id: String,
    pub secret: Option<String>,
}

fn client() -> awc::Client {
    awc::Client::builder()
        .timeout(STREAM_TIMEOUT)
        .disable_redirects()
        .finish()
}

/// A query parameter of the address a redirect sends to.
pub fn location_param(reply: &Reply, name: &str) -> Option<String> {
    let location = reply.headers.get("location")?.to_str().ok()?;
    let url = url::Url::parse(location).ok()?;
    url.query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

impl TestApp {
    /// `POST /oauth/register` with `body`.
    pub async fn oauth_register(&self, body: &Value) -> Reply {
        let sent = client()
            .post(format!("{}/oauth/register", self.address))
            .send_json(body)
            .await
            .expect("the request is sent");
        Reply::read(sent).await
    }

    /// A public client (`token_endpoint_auth_method: none`) named `name`.
    pub async fn oauth_client(&self, name: &str) -> OAuthClient {
        let reply = self
            .oauth_register(&json!({
                "client_name": name,
                "redirect_uris": [REDIRECT_URI],
                "token_endpoint_auth_method": "none",
            }))
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text());
        OAuthClient {
            id: reply.json()["client_id"]
                .as_str()
                .expect("a client_id")
                .to_owned(),
            secret: None,
        }
    }

    /// What the app's metadata call `/mcp` (the resource of its tokens) and itself (the
    /// origin of its pages): `<BOR_PUBLIC_URL>` or the app's address.
    pub async fn oauth_addresses(&self) -> (String, String) {
        let metadata = self
            .get("/.well-known/oauth-protected-resource", None)
            .await
            .json();
        let text = |value: &Value| value.as_str().expect("an address").to_owned();
        (
            text(&metadata["resource"]),
            text(&metadata["authorization_servers"][0]),
        )
    }

    /// The authorization request of `client` as query pairs, `changes` replacing or
    /// (with an empty value) leaving out some.
    pub async fn authorization_request(
        &self,
        client: &OAuthClient,
        changes: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let (resource, _) = self.oauth_addresses().await;
        let mut pairs: Vec<(String, String)> = [
            ("response_type", "code"),
            ("client_id", client.id.as_str()),
            ("redirect_uri", REDIRECT_URI),
            ("state", "state-42"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("resource", resource.as_str()),
        ]
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
        for (name, value) in changes {
            pairs.retain(|(known, _)| known != name);
            if !value.is_empty() {
                pairs.push(((*name).to_owned(), (*value).to_owned()));
            }
        }
        pairs
    }

    /// `GET /oauth/authorize?pairs` with the session cookie when given.
    pub async fn oauth_authorize(&self, cookie: Option<&str>, pairs: &[(String, String)]) -> Reply {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        let mut request = client().get(format!("{}/oauth/authorize?{query}", self.address));
        if let Some(cookie) = cookie {
            request = request.insert_header(("Cookie", format!("bor_session={cookie}")));
        }
        Reply::read(request.send().await.expect("the request is sent")).await
    }

    /// `POST /oauth/authorize` (the consent form) with the cookie, from `origin`.
    pub async fn oauth_consent(
        &self,
        cookie: &str,
        origin: &str,
        pairs: &[(String, String)],
        decision: &str,
    ) -> Reply {
        let mut form = pairs.to_vec();
        form.push(("decision".to_owned(), decision.to_owned()));
        let sent = client()
            .post(format!("{}/oauth/authorize", self.address))
            .insert_header(("Cookie", format!("bor_session={cookie}")))
            .insert_header(("Origin", origin))
            .send_form(&form)
            .await
            .expect("the request is sent");
        Reply::read(sent).await
    }

    /// The code the person signed in with `cookie` gets by allowing `client`.
    pub async fn oauth_code(&self, cookie: &str, client: &OAuthClient) -> String {
        let pairs = self.authorization_request(client, &[]).await;
        let page = self.oauth_authorize(Some(cookie), &pairs).await;
        assert_eq!(page.status, 200, "{}", page.text());
        let (_, origin) = self.oauth_addresses().await;
        let allowed = self.oauth_consent(cookie, &origin, &pairs, "allow").await;
        assert_eq!(allowed.status, 302, "{}", allowed.text());
        assert_eq!(
            location_param(&allowed, "state").as_deref(),
            Some("state-42")
        );
        location_param(&allowed, "code").expect("a code")
    }

    /// `POST /oauth/token` with `form`, and Basic authentication when given.
    pub async fn oauth_token(&self, form: &[(&str, &str)], basic: Option<(&str, &str)>) -> Reply {
        self.oauth_form("/oauth/token", form, basic).await
    }

    /// A form-encoded `POST` to `path`, with Basic authentication when given.
    pub async fn oauth_form(
        &self,
        path: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Reply {
        let mut request = client().post(format!("{}{path}", self.address));
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, secret);
        }
        let sent = request.send_form(&form).await.expect("the request is sent");
        Reply::read(sent).await
    }

    /// The code of `client` exchanged: the token response.
    pub async fn oauth_exchange(&self, client: &OAuthClient, code: &str) -> Reply {
        let (resource, _) = self.oauth_addresses().await;
        self.oauth_token(
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", REDIRECT_URI),
                ("code_verifier", VERIFIER),
                ("client_id", &client.id),
                ("resource", &resource),
            ],
            None,
        )
        .await
    }

    /// The whole flow for the person signed in with `cookie` and a new public client
    /// named `name`: the client and the token response (`access_token`,
    /// `refresh_token`, …).
    pub async fn oauth_tokens(&self, cookie: &str, name: &str) -> (OAuthClient, Value) {
        let client = self.oauth_client(name).await;
        let code = self.oauth_code(cookie, &client).await;
        let reply = self.oauth_exchange(&client, &code).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        (client, reply.json())
    }
}
