// Passkey ceremonies of the account pages. A static file: the site's Content-Security-Policy
// forbids inline script.
//
// A form with data-passkey="create" (a new passkey) or "get" (use one) and
// data-options-url: when it is sent, the options are asked of the server (POST, with the
// form's CSRF token), the browser runs the ceremony, its answer goes into the form's hidden
// "credential" input as JSON, and the form is sent. A "get" form with
// data-passkey-autofill="<input id>" also offers the site's passkeys in that input's
// autofill (conditional mediation), where the browser supports it.
(function () {
  "use strict";

  function toBytes(base64url) {
    var base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
    var binary = atob(base64 + "===".slice((base64.length + 3) % 4));
    return Uint8Array.from(binary, function (character) { return character.charCodeAt(0); });
  }

  function toBase64url(buffer) {
    var binary = "";
    new Uint8Array(buffer).forEach(function (byte) { binary += String.fromCharCode(byte); });
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function withIds(descriptors) {
    return (descriptors || []).map(function (descriptor) {
      return Object.assign({}, descriptor, { id: toBytes(descriptor.id) });
    });
  }

  function creationOptions(options) {
    options.challenge = toBytes(options.challenge);
    options.user.id = toBytes(options.user.id);
    options.excludeCredentials = withIds(options.excludeCredentials);
    return options;
  }

  function requestOptions(options) {
    options.challenge = toBytes(options.challenge);
    options.allowCredentials = withIds(options.allowCredentials);
    return options;
  }

  function answer(credential) {
    var response = credential.response;
    var json = {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || null,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: { clientDataJSON: toBase64url(response.clientDataJSON) }
    };
    if (response.attestationObject) {
      json.response.attestationObject = toBase64url(response.attestationObject);
      json.response.transports = response.getTransports ? response.getTransports() : [];
    } else {
      json.response.authenticatorData = toBase64url(response.authenticatorData);
      json.response.signature = toBase64url(response.signature);
      json.response.userHandle = response.userHandle ? toBase64url(response.userHandle) : null;
    }
    return JSON.stringify(json);
  }

  function fetchOptions(form) {
    return fetch(form.dataset.optionsUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": form.elements.csrfmiddlewaretoken.value }
    }).then(function (response) {
      if (!response.ok) {
        throw new Error("The server refused the passkey options (" + response.status + ").");
      }
      return response.json();
    });
  }

  function ceremony(form, mediation, signal) {
    return fetchOptions(form).then(function (options) {
      if (form.dataset.passkey === "create") {
        return navigator.credentials.create({ publicKey: creationOptions(options) });
      }
      var request = { publicKey: requestOptions(options) };
      if (mediation) {
        request.mediation = mediation;
        request.signal = signal;
      }
      return navigator.credentials.get(request);
    }).then(function (credential) {
      form.elements.credential.value = answer(credential);
      form.submit();
    });
  }

  function show(form, selector) {
    var element = form.querySelector(selector);
    if (element) {
      element.hidden = false;
    }
  }

  function prepare(form) {
    if (!window.PublicKeyCredential || !navigator.credentials) {
      show(form, ".passkey-unsupported");
      return;
    }
    var autofill = null;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (autofill) {
        autofill.abort();
        autofill = null;
      }
      form.querySelector(".passkey-error").hidden = true;
      ceremony(form).catch(function () { show(form, ".passkey-error"); });
    });
    var field = form.dataset.passkeyAutofill && document.getElementById(form.dataset.passkeyAutofill);
    if (field && PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
        if (!available) {
          return;
        }
        field.setAttribute("autocomplete", "username webauthn");
        autofill = new AbortController();
        ceremony(form, "conditional", autofill.signal).catch(function () {});
      });
    }
  }

  document.querySelectorAll("form[data-passkey]").forEach(prepare);
}());
