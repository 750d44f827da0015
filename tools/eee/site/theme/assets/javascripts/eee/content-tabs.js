// Material for MkDocs 9.x, partials/javascripts/content.html (content.tabs.link), as a file
// (the site's Content-Security-Policy runs no inline script): linked content tabs, restored.
var tabs=__md_get("__tabs");if(Array.isArray(tabs))e:for(var set of document.querySelectorAll(".tabbed-set")){var labels=set.querySelector(".tabbed-labels");for(var tab of tabs)for(var label of labels.getElementsByTagName("label"))if(label.innerText.trim()===tab){var input=document.getElementById(label.htmlFor);input.checked=!0;continue e}}
