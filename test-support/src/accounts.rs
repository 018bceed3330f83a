//! People in tests: users made straight in the database, and requests that carry a
//! session cookie or a key (awc keeps no cookies: the cookie is passed along).

use awc::http::Method;
use bor::db::users::Role;
use serde_json::Value;

use super::{Reply, TestApp};

/// The password every user made by [`TestApp::add_user`] has.
pub const PASSWORD: &str = "correct horse battery staple";

/// How a request proves who sends it.
#[derive(Debug, Clone)]
pub enum Credential {
    Nobody,
    /// The `bor_session` cookie's value; the request says it comes from the app's own
    /// origin.
    Cookie(String),
    /// The cookie, from another site (`Origin: http://evil.example`).
    CookieFrom(String, String),
    /// `Authorization: Bearer …` (a key or the service token).
    Bearer(String),
}

impl TestApp {
    /// Makes a user with [`PASSWORD`]; returns their id.
    pub async fn add_user(&self, username: &str, role: Role) -> String {
        let mut conn = self.pool.get().await.expect("a connection");
        let (row, _) = bor::auth::people::create_user(
            &mut conn,
            username,
            None,
            role,
            Some(PASSWORD.to_owned()),
        )
        .await
        .expect("the user is made");
        row.id.to_string()
    }

    /// `POST /api/auth/login`.
    pub async fn login(&self, username: &str, password: &str) -> Reply {
        self.call(
            Method::POST,
            "/api/auth/login",
            &Credential::Nobody,
            Some(serde_json::json!({"username": username, "password": password})),
        )
        .await
    }

    /// Signs in with [`PASSWORD`]; the session cookie's value.
    pub async fn sign_in(&self, username: &str) -> String {
        self.sign_in_with(username, PASSWORD).await
    }

    /// Signs in; the session cookie's value.
    pub async fn sign_in_with(&self, username: &str, password: &str) -> String {
        let reply = self.login(username, password).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        session_cookie(&reply).expect("the login sets the session cookie")
    }

    /// A request with `credential` and a JSON body; redirects are not followed.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        credential: &Credential,
        body: Option<Value>,
    ) -> Reply {
        // Redirects are answers to look at (a page sends to the login page), not to follow.
        let client = awc::Client::builder()
            .timeout(super::STREAM_TIMEOUT)
            .disable_redirects()
            .finish();
        let mut request = client.request(method, format!("{}{path}", self.address));
        match credential {
            Credential::Nobody => {}
            Credential::Cookie(value) => {
                request = request
                    .insert_header(("Cookie", format!("bor_session={value}")))
                    .insert_header(("Origin", self.address.clone()));
            }
            Credential::CookieFrom(value, origin) => {
                request = request
                    .insert_header(("Cookie", format!("bor_session={value}")))
                    .insert_header(("Origin", origin.clone()));
            }
            Credential::Bearer(token) => request = request.bearer_auth(token),
        }
        let response = match body {
            Some(body) => request.send_json(&body).await,
            None => request.send().await,
        }
        .expect("the request is sent");
        Reply::read(response).await
    }

    /// `DELETE /api/keys/{id}` as the user signed in with `cookie`.
    pub async fn revoke_key(&self, cookie: &str, id: &str) -> Reply {
        let path = format!("/api/keys/{id}");
        self.call(
            Method::DELETE,
            &path,
            &Credential::Cookie(cookie.to_owned()),
            None,
        )
        .await
    }

    /// A new key of the user signed in with `cookie`: (id, key).
    pub async fn make_key(&self, cookie: &str, name: &str) -> (String, String) {
        let reply = self
            .call(
                Method::POST,
                "/api/keys",
                &Credential::Cookie(cookie.to_owned()),
                Some(serde_json::json!({ "name": name })),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text());
        let json = reply.json();
        (
            json["id"].as_str().expect("an id").to_owned(),
            json["key"].as_str().expect("a key").to_owned(),
        )
    }
}

/// The value of the `bor_session` cookie a response sets.
pub fn session_cookie(reply: &Reply) -> Option<String> {
    reply
        .headers
        .get_all("set-cookie")
        .filter_map(|value| value.to_str().ok())
        .find_map(|value| value.strip_prefix("bor_session="))
        .map(|rest| rest.split(';').next().unwrap_or_default().to_owned())
}
