// Requests to this service's API, with the page's key, counting what is under way
// (window.gridpathViewer.busy, which tests wait on).

export class ApiError extends Error {
  constructor(code, message, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

// `state`: an object whose `busy` counts requests under way; `key()`: the bearer key
// or "".
export function client(state, key) {
  return async function api(method, path, body, contentType) {
    const headers = {};
    const bearer = key();
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    if (contentType) headers["Content-Type"] = contentType;
    let response;
    state.busy += 1;
    document.body.dataset.busy = "true";
    try {
      response = await fetch(path, { method, headers, body });
    } catch (err) {
      throw new ApiError("NetworkError", String(err && err.message ? err.message : err), 0);
    } finally {
      state.busy -= 1;
      if (state.busy === 0) delete document.body.dataset.busy;
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  };
}

// The service's {code, message}, or the status line for a body that is not one.
async function errorOf(response) {
  let code = `HTTP ${response.status}`;
  let message = response.statusText;
  try {
    const error = await response.json();
    if (error && typeof error.code === "string") {
      code = error.code;
      message = error.message;
    }
  } catch (_) {
    // not the service's error body: keep the status line
  }
  return new ApiError(code, message, response.status);
}

export function postJson(api, path, body) {
  return api("POST", path, JSON.stringify(body), "application/json");
}
