// Swagger UI for one OpenAPI document of the platform (?url=/api/v1/openapi.json). Only documents
// of this origin are shown: the page must not become a renderer for anyone's document.
(function () {
  var asked = new URLSearchParams(window.location.search).get('url') || '';
  var target = new URL(asked, window.location.origin);
  if (target.origin !== window.location.origin || !/\/openapi\.json$/.test(target.pathname)) {
    document.getElementById('swagger-ui').textContent = 'Only this platform\'s OpenAPI documents can be shown here.';
    return;
  }
  window.ui = window.SwaggerUIBundle({
    url: target.pathname,
    dom_id: '#swagger-ui',
    deepLinking: true,
    tryItOutEnabled: false,
    // Nothing is fetched from elsewhere: no validator badge (it calls validator.swagger.io).
    validatorUrl: null,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
})();
