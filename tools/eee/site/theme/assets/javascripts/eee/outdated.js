// Material for MkDocs 9.x, partials/javascripts/outdated.html, as a file (the site's
// Content-Security-Policy runs no inline script): the outdated-version banner. The site's
// base URL, written into the page by the template, comes from the script's data-md-base.
var el=document.querySelector("[data-md-component=outdated]"),base=new URL(document.currentScript.getAttribute("data-md-base"),location),outdated=__md_get("__outdated",sessionStorage,base);!0===outdated&&el&&(el.hidden=!1)
