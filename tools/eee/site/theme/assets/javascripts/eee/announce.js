// Material for MkDocs 9.x, partials/javascripts/announce.html, as a file (the site's
// Content-Security-Policy runs no inline script): a dismissed announcement stays hidden.
var el=document.querySelector("[data-md-component=announce]");if(el){var content=el.querySelector(".md-typeset");__md_hash(content.innerHTML)===__md_get("__announce")&&(el.hidden=!0)}
