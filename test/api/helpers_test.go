package api_test

import (
	"encoding/json"
	"io"
	"net/http"
)

func jsonDecode(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }

func readAll(res *http.Response) string {
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
