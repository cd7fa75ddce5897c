'use strict';
// The reason phrases PostgREST's status lines carry: http-types'
// statusMessage (Warp writes it), which differ from Node's STATUS_CODES on
// a few statuses (416 "Requested Range Not Satisfiable", 418 "I'm a
// teapot", 413, 414, 422 ...). The same table as server/reason_phrase.c.
const PHRASES = {
  100: 'Continue', 101: 'Switching Protocols',
  200: 'OK', 201: 'Created', 202: 'Accepted', 203: 'Non-Authoritative Information',
  204: 'No Content', 205: 'Reset Content', 206: 'Partial Content',
  300: 'Multiple Choices', 301: 'Moved Permanently', 302: 'Found', 303: 'See Other',
  304: 'Not Modified', 305: 'Use Proxy', 307: 'Temporary Redirect', 308: 'Permanent Redirect',
  400: 'Bad Request', 401: 'Unauthorized', 402: 'Payment Required', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable',
  407: 'Proxy Authentication Required', 408: 'Request Timeout', 409: 'Conflict', 410: 'Gone',
  411: 'Length Required', 412: 'Precondition Failed', 413: 'Request Entity Too Large',
  414: 'Request-URI Too Long', 415: 'Unsupported Media Type',
  416: 'Requested Range Not Satisfiable', 417: 'Expectation Failed', 418: "I'm a teapot",
  422: 'Unprocessable Entity', 426: 'Upgrade Required', 428: 'Precondition Required',
  429: 'Too Many Requests', 431: 'Request Header Fields Too Large',
  500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway',
  503: 'Service Unavailable', 504: 'Gateway Timeout', 505: 'HTTP Version Not Supported',
  511: 'Network Authentication Required',
};

// The phrase for status; undefined leaves Node's own (a status http-types
// has no phrase for, where Warp sends an empty one Node cannot).
module.exports = function reasonPhrase(status) {
  return PHRASES[status];
};
