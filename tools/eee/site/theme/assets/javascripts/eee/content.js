// Material for MkDocs 9.x, partials/javascripts/content.html, as a file (the site's
// Content-Security-Policy runs no inline script): the content tab named in the URL, opened.
var target=document.getElementById(location.hash.slice(1));target&&target.name&&(target.checked=target.name.startsWith("__tabbed_"))
