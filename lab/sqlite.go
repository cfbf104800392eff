package lab

import (
	"net/url"
	"strings"
)

// SQLiteFile returns the URI of the SQLite database file at path, the
// first part of a connection string: "file:" and the path, escaped, so that
// the settings after it ("?_pragma=…") stay settings whatever the file is
// called. In a URI a '?' would start the settings, a '#' end them and a '%'
// begin an escape, and a path that begins with "//" would be read as the
// name of a host (SQLite then refuses it, or opens another file): an
// unescaped name holding one opens another file, or the right one without
// its settings.
func SQLiteFile(path string) string {
	p := (&url.URL{Path: path}).EscapedPath()
	if strings.HasPrefix(p, "//") {
		p = "//" + p // an empty authority first, so that the path's own "//" stays the path's
	}
	return "file:" + p
}
