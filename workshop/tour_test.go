package workshop

import (
	"html"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTourPage: /tour shows every step of Tour in order, with its command,
// a link to its Click path, what to look at, its question, and its answer
// inside a closed <details>; the navigation links to it from every page.
func TestTourPage(t *testing.T) {
	d, _ := tabbed(t)
	h, err := Handler(d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, page := get(t, srv, "/tour")
	if code != 200 {
		t.Fatalf("GET /tour = %d:\n%s", code, page)
	}
	rest := page
	for i, s := range Tour {
		_, after, ok := strings.Cut(rest, `<li class="step"`)
		if !ok {
			t.Fatalf("GET /tour shows %d steps, want %d", i, len(Tour))
		}
		step, _, _ := strings.Cut(after, "</li>")
		rest = after
		for _, want := range []string{html.EscapeString(s.Title), html.EscapeString(s.Command()), `href="` + html.EscapeString(s.Click) + `"`,
			html.EscapeString(s.Look), html.EscapeString(s.Question)} {
			if !strings.Contains(step, want) {
				t.Errorf("step %d (%s) lacks %q:\n%s", i+1, s.Title, want, step)
			}
		}
		_, answer, ok := strings.Cut(step, `<details class="answer">`)
		if !ok || !strings.Contains(answer, html.EscapeString(s.Answer)) {
			t.Errorf("step %d (%s): its answer is not inside a <details>:\n%s", i+1, s.Title, step)
		}
		if strings.Contains(step, "<details class=\"answer\" open") {
			t.Errorf("step %d (%s): its answer is open before anyone asks", i+1, s.Title)
		}
	}
	if strings.Contains(rest[strings.Index(rest, "</li>")+5:], `<li class="step"`) {
		t.Errorf("GET /tour shows more steps than Tour's %d", len(Tour))
	}
	if _, matrix := get(t, srv, "/"); !strings.Contains(matrix, `<a href="/tour">Tour</a>`) {
		t.Errorf("the matrix page's navigation has no Tour link")
	}
}
