//! The page: one HTML file, its script and its style, compiled into the
//! binary (no build step, nothing fetched from elsewhere). The script
//! writes every text it shows with `textContent`, never as HTML, so a
//! CLI's words cannot become markup; the server's Content-Security-Policy
//! allows only these files' own script and style.

use axum::http::header;
use axum::response::IntoResponse;

pub async fn index() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        include_str!("assets/index.html"),
    )
}

pub async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/app.js"),
    )
}

pub async fn style() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/app.css"),
    )
}
