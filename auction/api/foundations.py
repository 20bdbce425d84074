"""``/api/v1/foundations``: upload a cfdot capture, list the named foundations (plans.md 3.6);
``/api/v1/foundations/NAME``: replace (``PUT``) or delete (``DELETE``) one (plans.md 3.3).

A capture arrives as multipart files (``file``, repeated; ``name`` to keep it named) or,
for scripts and the schema fuzzer, as JSON ``{"name"?, "files": [{"name", "content"}]}``.
Either way it goes to the one service, ``foundation_import``; a refused capture answers
400 with the reader's ``file:line: field: why``, a body over the limit 413. A ``PUT``
takes the name from its path (a ``name`` member is refused) and keeps the capture as that
foundation, its next version when it exists.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from django.http.multipartparser import MultiPartParserError

from auction.api.auth import operator, reader
from auction.api.http import endpoint, json_body, ok
from auction.middleware import upload_limit
from auction.services.errors import BBSError, InvalidRequest, ResourceNotFound
from auction.services.foundations import (
    CaptureError,
    FoundationError,
    FoundationNotFound,
    foundation_delete,
    foundation_import,
    foundation_list,
)


class TooLarge(BBSError):
    type = "InvalidRequest"
    status = 413


def _files(request: HttpRequest) -> tuple[list[tuple[str, Any]], str | None]:
    limit = upload_limit()
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > limit:
        raise TooLarge(f"capture too large: {length} bytes, the limit is {limit} (DIEGO_UPLOAD_MAX_MB)")
    if request.content_type == "multipart/form-data":
        try:
            if request.method == "POST":
                post, uploaded = request.POST, request.FILES
            else:  # Django parses a multipart body only for a POST
                post, uploaded = request.parse_file_upload(request.META, request)
            uploads = uploaded.getlist("file")
            name = post.get("name") or None
        except (MultiPartParserError, RequestDataTooBig) as exc:
            raise InvalidRequest(f"invalid multipart body: {exc}") from None
        if not uploads:
            raise InvalidRequest("Invalid field: file (no capture files were sent)")
        return [(f.name or "upload", f) for f in uploads], name
    try:
        request.body  # noqa: B018 - read it here to answer a too large one with 413
    except RequestDataTooBig:
        raise TooLarge("capture too large for a JSON body (DATA_UPLOAD_MAX_MEMORY_SIZE): "
                       "send the files as multipart/form-data") from None
    body = json_body(request)
    unknown = sorted(set(body) - {"name", "files"})
    files = body.get("files")
    errors = [f"Invalid field: {n}" for n in unknown]
    if not isinstance(files, list) or not files or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("content"), str)
            and set(f) == {"name", "content"} for f in files):
        errors.append("Invalid field: files")
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        errors.append("Invalid field: name")
    if errors:
        raise InvalidRequest(", ".join(errors))
    try:
        return [(f["name"], f["content"].encode("utf-8")) for f in files], name
    except UnicodeEncodeError:
        raise InvalidRequest("Invalid field: files (not UTF-8 text)") from None


def _create(request: HttpRequest) -> JsonResponse:
    user = operator(request)
    files, name = _files(request)
    try:
        result = foundation_import(files, as_name=name, user=user, source="api",
                                   limit_bytes=upload_limit())
    except (CaptureError, FoundationError) as exc:
        raise InvalidRequest(exc.message) from None
    return ok(result.as_dict(), status=201)


def _replace(request: HttpRequest, name: str) -> JsonResponse:
    user = operator(request)
    files, named = _files(request)
    if named is not None:
        raise InvalidRequest("Invalid field: name (the path names the foundation)")
    try:
        result = foundation_import(files, as_name=name, replace=True, user=user, source="api",
                                   limit_bytes=upload_limit())
    except (CaptureError, FoundationError) as exc:
        raise InvalidRequest(exc.message) from None
    return ok(result.as_dict())


def _delete(request: HttpRequest, name: str) -> JsonResponse:
    user = operator(request)
    try:
        version = foundation_delete(name, user=user, source="api")
    except FoundationNotFound as exc:
        raise ResourceNotFound(exc.message) from None
    return ok({"name": name, "version": version})


def _list(request: HttpRequest) -> JsonResponse:
    reader(request)
    return ok({"foundations": foundation_list()})


collection = endpoint(get=_list, post=_create)
member = endpoint(put=_replace, delete=_delete)
