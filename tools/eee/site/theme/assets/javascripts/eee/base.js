// Material for MkDocs 9.x, partials/javascripts/base.html, as a file (the site's
// Content-Security-Policy runs no inline script): the storage helpers every page uses.
// The scope, written into the page by the template, comes from the script's data-md-scope.
__md_scope=new URL(document.currentScript.getAttribute("data-md-scope"),location),__md_hash=e=>[...e].reduce(((e,_)=>(e<<5)-e+_.charCodeAt(0)),0),__md_get=(e,_=localStorage,t=__md_scope)=>JSON.parse(_.getItem(t.pathname+"."+e)),__md_set=(e,_,t=localStorage,a=__md_scope)=>{try{t.setItem(a.pathname+"."+e,JSON.stringify(_))}catch(e){}};
