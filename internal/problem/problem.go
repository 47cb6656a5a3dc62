// Package problem classifies errors that a user may see. Domains declare
// their sentinel errors as problems (for example
// problem.Conflict("Username already exists")) so that the transport layer can
// map each kind to a status code and show its message verbatim, while any other
// error is logged and shown only as a generic internal error.
package problem

import (
	"errors"
	"time"
)

// Kind is the class of a problem; the transport maps it to a status code.
type Kind int

// The kinds of problem, each mapped to one HTTP status and Connect code.
const (
	KindInvalid         Kind = iota + 1 // 400, invalid_argument
	KindUnauthenticated                 // 401, unauthenticated
	KindForbidden                       // 403, permission_denied
	KindNotFound                        // 404, not_found
	KindConflict                        // 409, aborted / already_exists
	KindTooManyRequests                 // 429, resource_exhausted
	KindUnavailable                     // 503, unavailable
)

// Error is an error whose message is written for the user.
type Error struct {
	Kind    Kind
	Message string
	// RetryAfter is set on KindTooManyRequests: how long until a retry may succeed.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// Invalid reports bad input (HTTP 400).
func Invalid(msg string) *Error { return &Error{Kind: KindInvalid, Message: msg} }

// Unauthenticated reports a missing or bad credential (HTTP 401).
func Unauthenticated(msg string) *Error { return &Error{Kind: KindUnauthenticated, Message: msg} }

// Forbidden reports a caller without the right to act (HTTP 403).
func Forbidden(msg string) *Error { return &Error{Kind: KindForbidden, Message: msg} }

// NotFound reports a missing resource (HTTP 404).
func NotFound(msg string) *Error { return &Error{Kind: KindNotFound, Message: msg} }

// Conflict reports a clash with the current state (HTTP 409).
func Conflict(msg string) *Error { return &Error{Kind: KindConflict, Message: msg} }

// Unavailable reports a dependency that is down (HTTP 503).
func Unavailable(msg string) *Error { return &Error{Kind: KindUnavailable, Message: msg} }

// TooManyRequests reports an exceeded rate limit (HTTP 429).
func TooManyRequests(msg string, retryAfter time.Duration) *Error {
	return &Error{Kind: KindTooManyRequests, Message: msg, RetryAfter: retryAfter}
}

// As returns the problem inside err, if any.
func As(err error) (*Error, bool) {
	var p *Error
	if errors.As(err, &p) {
		return p, true
	}
	return nil, false
}
