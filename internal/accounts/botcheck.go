package accounts

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DevelopmentBotToken is the only token the development bot check accepts:
// the dummy token Cloudflare's test site keys produce.
const DevelopmentBotToken = "XXXX.DUMMY.TOKEN.XXXX"

// Turnstile verifies tokens with Cloudflare Turnstile's siteverify endpoint.
type Turnstile struct {
	secret  string
	siteKey string
	url     string
	client  *http.Client
}

// NewTurnstile returns a verifier that posts to verifyURL with secret.
func NewTurnstile(secret, siteKey, verifyURL string, client *http.Client) *Turnstile {
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	return &Turnstile{secret: secret, siteKey: siteKey, url: verifyURL, client: client}
}

// SiteKey returns the public site key for the widget.
func (t *Turnstile) SiteKey() string { return t.siteKey }

// Verify asks siteverify whether token is valid for remoteIP.
func (t *Turnstile) Verify(ctx context.Context, token, remoteIP string) error {
	if token == "" || len(token) > 2048 {
		return ErrBotCheck
	}
	form := url.Values{"secret": {t.secret}, "response": {token}}
	if remoteIP != "" {
		form.Set("remoteip", remoteIP)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("turnstile request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("turnstile siteverify: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("turnstile siteverify: status %d", res.StatusCode)
	}
	var body struct {
		Success    bool     `json:"success"`
		ErrorCodes []string `json:"error-codes"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&body); err != nil {
		return fmt.Errorf("turnstile siteverify: decode: %w", err)
	}
	if !body.Success {
		return ErrBotCheck
	}
	return nil
}

// DevelopmentBotCheck accepts DevelopmentBotToken and nothing else. The
// server uses it when no Turnstile secret is configured.
type DevelopmentBotCheck struct{}

// SiteKey is empty: the web app shows its development widget.
func (DevelopmentBotCheck) SiteKey() string { return "" }

// Verify accepts only DevelopmentBotToken.
func (DevelopmentBotCheck) Verify(_ context.Context, token, _ string) error {
	if subtle.ConstantTimeCompare([]byte(token), []byte(DevelopmentBotToken)) != 1 {
		return ErrBotCheck
	}
	return nil
}
