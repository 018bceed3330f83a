//! The admin guard: handlers that take an [`Admin`] run only for an admin. With
//! `BOR_AUTH=accounts` that is a caller the enforcement middleware found to be one (an
//! admin's session or key, or the service token); with `off`, a request carrying
//! `Authorization: Bearer <BOR_ADMIN_TOKEN>`, compared in constant time.

use std::future::{Ready, ready};

use actix_web::http::header;
use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};
use subtle::ConstantTimeEq;

use super::error::ApiError;
use super::protocol::bearer_token;
use crate::auth::Caller;
use crate::config::AuthMode;
use crate::state::AppState;

/// Proof that the request came from an admin.
#[derive(Debug)]
pub struct Admin;

impl FromRequest for Admin {
    type Error = ApiError;
    type Future = Ready<Result<Admin, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(authorize(request))
    }
}

fn authorize(request: &HttpRequest) -> Result<Admin, ApiError> {
    let state = request
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::Internal("the app state is missing".into()))?;
    if state.accounts.mode == AuthMode::Accounts {
        return match request.extensions().get::<Caller>() {
            Some(caller) if caller.is_admin() => Ok(Admin),
            Some(_) => Err(ApiError::Forbidden),
            None => Err(ApiError::NotSignedIn),
        };
    }
    let Some(expected) = state.config.admin_token.as_ref() else {
        return Err(ApiError::AdminDisabled);
    };
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token)
        .ok_or(ApiError::Unauthorized)?;
    if presented
        .as_bytes()
        .ct_eq(expected.expose().as_bytes())
        .into()
    {
        Ok(Admin)
    } else {
        Err(ApiError::Unauthorized)
    }
}
