//! The admin guard: handlers that take an [`Admin`] run only for an admin, as the door
//! found (`door.rs`): with `BOR_AUTH=accounts` an admin caller (an admin's session or
//! key, or the service token); with `off`, a request carrying
//! `Authorization: Bearer <BOR_ADMIN_TOKEN>`.

use std::future::{Ready, ready};

use actix_web::{FromRequest, HttpRequest, dev::Payload};

use super::door::admin_verdict;
use super::error::ApiError;

/// Proof that the request came from an admin.
#[derive(Debug)]
pub struct Admin;

impl FromRequest for Admin {
    type Error = ApiError;
    type Future = Ready<Result<Admin, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(admin_verdict(request).map(|()| Admin))
    }
}
