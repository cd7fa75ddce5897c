"""The library's own failures as exceptions (HTTP answers are responses)."""


class PgrestError(Exception):
    """A failure of libpgrest itself: a configuration key or value refused,
    the schema cache not loaded, the library not found. Carries what
    PostgREST's error body carries; http_status is 0 and code None for
    configuration errors, which are no HTTP errors."""

    def __init__(self, message, code=None, details=None, hint=None,
                 http_status=0, status=0):
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details
        self.hint = hint
        self.http_status = http_status
        self.status = status      # the pgrest_status the call returned

    def __str__(self):
        head = "%s: %s" % (self.code, self.message) if self.code else self.message
        return head + ("" if self.details is None else " (%s)" % self.details)


class ConfigError(PgrestError):
    """pgrest_ctx_set / pgrest_ctx_reload_config refused the configuration."""


class SchemaError(PgrestError):
    """The schema cache could not be loaded."""


class LibraryNotFound(PgrestError):
    """libpgrest could not be found or loaded."""
