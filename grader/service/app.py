"""The HTTP API (Flask), versioned under /v1; every answer is JSON but the HTML page.

  GET  /v1/health                          no token: up, its mode, its jobs by state
  POST /v1/submissions                     an archive (raw body, or multipart field
                                           'submission'); fields or query: exercise (repeatable),
                                           exercises (comma-separated), client_ref -> 202
  GET  /v1/submissions/<id>                state, position in the queue, progress, times
  GET  /v1/submissions/<id>/report         the grader's JSON report
  GET  /v1/submissions/<id>/gradescope     Gradescope's results.json
  GET  /v1/submissions/<id>/prairielearn   PrairieLearn's results.json (under 1 MiB)
  GET  /v1/submissions/<id>/html           the HTML report, where the grader made one

This is the only module of the service that imports Flask: `grade` and the rest of the grader
never load it."""

from __future__ import annotations

import io
import json

from flask import Flask, Request, Response, request, send_file
from werkzeug.exceptions import HTTPException

from grader.service.submissions import ApiError, Service

# What a multipart request carries besides the archive: boundaries, headers, small fields.
MULTIPART_SLACK = 64 * 1024
_PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


class _InMemoryRequest(Request):
    """An uploaded file stays in memory (the upload limit bounds it): nothing of an upload is
    written anywhere before its checks, not even a temporary file."""

    def _get_file_stream(self, total_content_length, content_type, filename=None,
                         content_length=None):
        return io.BytesIO()


def _json(data, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json.dumps(data, indent=2) + "\n", status=status, headers=headers,
                    mimetype="application/json")


def _error(status: int, code: str, message: str, headers: dict | None = None,
           extra: dict | None = None) -> Response:
    return _json({"error": {"code": code, "message": message}, **(extra or {})}, status,
                 headers)


def _fields(name: str) -> list[str]:
    return request.args.getlist(name) + request.form.getlist(name)


def create_app(service: Service) -> Flask:
    app = Flask("grader.service")
    app.request_class = _InMemoryRequest
    app.config["MAX_CONTENT_LENGTH"] = service.limits.max_upload_bytes + MULTIPART_SLACK
    app.json.sort_keys = False

    @app.errorhandler(ApiError)
    def api_error(error: ApiError):
        return _error(error.status, error.code, error.message, error.headers, error.extra)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        code = {413: "too_large", 404: "not_found", 405: "method_not_allowed"}.get(
            error.code or 500, "bad_request")
        return _error(error.code or 500, code, error.description or error.name)

    @app.after_request
    def no_store(response: Response):
        response.headers.setdefault("Cache-Control", "no-store")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    @app.get("/v1/health")
    def health():
        return _json(service.health())

    @app.post("/v1/submissions")
    def submit():
        token = service.caller(request.headers.get("Authorization"))
        multipart = request.mimetype == "multipart/form-data"
        length = request.content_length
        if multipart and length is not None:
            length = max(0, length - MULTIPART_SLACK)
        service.check_room(token, length)
        if multipart:
            upload = request.files.get("submission") or next(iter(request.files.values()),
                                                             None)
            if upload is None:
                raise ApiError(400, "no_archive", "the multipart request has no file: send the "
                               "archive as the field 'submission'")
            body = upload.read()
        else:
            body = request.get_data(cache=False)
        names = [n.strip() for n in _fields("exercise")]
        names += [n.strip() for value in _fields("exercises") for n in value.split(",")]
        reference = (_fields("client_ref") or [""])[0]
        job = service.accept(token, body, [n for n in names if n], reference)
        service.store.touch(token.id)
        view = service.view(job)
        return _json(view, 202, {"Location": view["links"]["self"]})

    @app.get("/v1/submissions/<job_id>")
    def status(job_id: str):
        token = service.caller(request.headers.get("Authorization"))
        return _json(service.view(service.job_for(token, job_id)))

    @app.get("/v1/submissions/<job_id>/report")
    def report(job_id: str):
        token = service.caller(request.headers.get("Authorization"))
        text = service.report_text(service.job_for(token, job_id))
        return Response(text, mimetype="application/json")

    @app.get("/v1/submissions/<job_id>/<platform>")
    def platform(job_id: str, platform: str):
        if platform not in ("gradescope", "prairielearn"):
            raise ApiError(404, "not_found", f"no such view {platform!r}: report, gradescope, "
                           "prairielearn or html")
        token = service.caller(request.headers.get("Authorization"))
        return _json(service.platform_results(service.job_for(token, job_id), platform))

    @app.get("/v1/submissions/<job_id>/html")
    def html(job_id: str):
        token = service.caller(request.headers.get("Authorization"))
        page = service.html(service.job_for(token, job_id))
        response = send_file(page, mimetype="text/html")
        response.headers["Content-Security-Policy"] = _PAGE_POLICY
        return response

    return app
