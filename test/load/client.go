package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// botToken passes the development bot check (no Turnstile secret configured).
const botToken = "XXXX.DUMMY.TOKEN.XXXX"

// password is every load player's password.
const password = "loadtest1"

// tokenMaxAge is when an access token is renewed (they last 15 minutes).
const tokenMaxAge = 10 * time.Minute

// player is one registered account with its own connection (which keeps
// its cookies: the CSRF cookie) and access token. A player is driven by one
// worker at a time.
type player struct {
	name, base   string
	conn         *conn
	csrf         string
	token        string
	refreshToken string
	tokenAt      time.Time
}

func newPlayer(ctx context.Context, base, name string) (*player, error) {
	c, err := newConn(base)
	if err != nil {
		return nil, err
	}
	p := &player{name: name, base: base, conn: c}
	var body struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := p.do(ctx, "GET", "/api/csrf", nil, &body); err != nil {
		return nil, err
	}
	if body.CSRFToken == "" {
		return nil, errors.New("GET /api/csrf: no csrfToken")
	}
	p.csrf = body.CSRFToken
	return p, nil
}

// httpError is a non-2xx response.
type httpError struct {
	method, path string
	status       int
	body         string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.method, e.path, e.status, e.body)
}

// callError is a transport failure or an unreadable 2xx response.
type callError struct {
	method, path, kind string
	err                error
}

func (e *callError) Error() string {
	return fmt.Sprintf("%s %s: %s: %v", e.method, e.path, e.kind, e.err)
}
func (e *callError) Unwrap() error { return e.err }

// errorKind classifies an error for the error breakdown: the HTTP status,
// "transport", "decode" or "protocol" (a 2xx answer that breaks the API's
// rules, such as a stand that leaves the game running).
func errorKind(err error) string {
	var he *httpError
	var ce *callError
	switch {
	case errors.As(err, &he):
		return strconv.Itoa(he.status)
	case errors.As(err, &ce):
		return ce.kind
	}
	return "protocol"
}

// do sends one request; a non-2xx status, a transport failure or a body that
// does not decode into out is an error. body is sent as is when it is
// []byte (pre-encoded JSON), else encoded.
func (p *player) do(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	status, resp, err := p.conn.roundTrip(ctx, method, path, raw, p.csrf, p.token)
	if err != nil {
		return &callError{method: method, path: path, kind: "transport", err: err}
	}
	if status/100 != 2 {
		msg := strings.TrimSpace(string(resp))
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return &httpError{method: method, path: path, status: status, body: msg}
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			return &callError{method: method, path: path, kind: "decode", err: err}
		}
	}
	return nil
}

type authResponse struct {
	Token        string `json:"token"`
	RefreshToken string `json:"refreshToken"`
}

func (p *player) setTokens(a authResponse) error {
	if a.Token == "" {
		return errors.New("auth: no token in the response")
	}
	p.token, p.tokenAt = a.Token, time.Now()
	if a.RefreshToken != "" {
		p.refreshToken = a.RefreshToken
	}
	return nil
}

// register creates the account; when the name is taken (a rerun with the
// same -prefix) it signs in instead.
func (p *player) register(ctx context.Context) error {
	var out authResponse
	err := p.do(ctx, "POST", "/api/auth/register", map[string]any{"username": p.name, "email": p.name + "@load.test",
		"password": password, "turnstileToken": botToken}, &out)
	var he *httpError
	if errors.As(err, &he) && (he.status == http.StatusConflict || strings.Contains(strings.ToLower(he.body), "already")) {
		err = p.do(ctx, "POST", "/api/auth/login", map[string]any{"username": p.name, "password": password,
			"turnstileToken": botToken}, &out)
	}
	if err != nil {
		return err
	}
	return p.setTokens(out)
}

// fresh renews the access token when it is getting old, so long runs do not
// turn into 401s.
func (p *player) fresh(ctx context.Context) error {
	if time.Since(p.tokenAt) < tokenMaxAge || p.refreshToken == "" {
		return nil
	}
	var out authResponse
	if err := p.do(ctx, "POST", "/api/auth/refresh", map[string]any{"refreshToken": p.refreshToken}, &out); err != nil {
		return err
	}
	return p.setTokens(out)
}
