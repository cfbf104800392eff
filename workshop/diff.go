package workshop

import (
	"regexp"
	"strings"
)

// SideBySide is a unified diff (git diff --no-index, as go run ./cmd/lab
// diff prints it) laid out in two columns, correct/ on the left and the
// variant on the right, removed and added lines paired up so that a changed
// line reads across.
type SideBySide struct {
	Files []DiffFile
}

// DiffFile is one file's diff, or a note ("schema.go: as in correct/ (the
// mistake is not here)").
type DiffFile struct {
	Name string
	Note string
	Rows []DiffRow
}

// DiffRow is one row: a line on either side, or a hunk header.
type DiffRow struct {
	Hunk        string // "@@ -10,6 +10,8 @@ func …" for a header row
	Left, Right string
	LeftKind    string // "same", "del", "" for an empty cell
	RightKind   string // "same", "add", ""
	// Lesson marks the header of the diff's first hunk that changes code:
	// the mistake, where the page opens.
	Lesson bool
	// Noise marks the rows of a hunk that changes only the package
	// clause, imports or comments.
	Noise bool
}

// ParseDiff reads the output of cmd/lab's diff.
func ParseDiff(text string) SideBySide {
	var sbs SideBySide
	var f *DiffFile
	var dels, adds []string
	flush := func() {
		if f == nil {
			return
		}
		for i := range max(len(dels), len(adds)) {
			var r DiffRow
			if i < len(dels) {
				r.Left, r.LeftKind = dels[i], "del"
			}
			if i < len(adds) {
				r.Right, r.RightKind = adds[i], "add"
			}
			f.Rows = append(f.Rows, r)
		}
		dels, adds = nil, nil
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "diff "):
			flush()
			sbs.Files = append(sbs.Files, DiffFile{})
			f = &sbs.Files[len(sbs.Files)-1]
		case f != nil && strings.HasPrefix(line, "+++ "):
			f.Name = strings.TrimPrefix(line, "+++ ")
		case strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "index ") || strings.HasPrefix(line, "similarity"):
		case f != nil && strings.HasPrefix(line, "@@"):
			flush()
			f.Rows = append(f.Rows, DiffRow{Hunk: line})
		case f != nil && strings.HasPrefix(line, "-"):
			dels = append(dels, line[1:])
		case f != nil && strings.HasPrefix(line, "+"):
			adds = append(adds, line[1:])
		case f != nil && strings.HasPrefix(line, " "):
			flush()
			f.Rows = append(f.Rows, DiffRow{Left: line[1:], Right: line[1:], LeftKind: "same", RightKind: "same"})
		case strings.Contains(line, ": as in ") && strings.HasSuffix(line, "(the mistake is not here)"):
			flush()
			f = nil
			sbs.Files = append(sbs.Files, DiffFile{Note: line})
		}
	}
	flush()
	markLesson(&sbs)
	return sbs
}

// markLesson finds the first hunk that changes code, and marks the hunks
// before it that change only the package clause, the imports or comments.
func markLesson(sbs *SideBySide) {
	for fi := range sbs.Files {
		rows := sbs.Files[fi].Rows
		for start := 0; start < len(rows); {
			end := start + 1
			for end < len(rows) && rows[end].Hunk == "" {
				end++
			}
			if rows[start].Hunk != "" && !noise(rows[start+1:end]) {
				rows[start].Lesson = true
				return
			}
			for i := start; i < end; i++ {
				rows[i].Noise = rows[start].Hunk != ""
			}
			start = end
		}
	}
}

// noise reports whether a hunk's changed lines are all package clause,
// import lines, comments or blank.
func noise(rows []DiffRow) bool {
	for _, r := range rows {
		for _, side := range []struct{ kind, text string }{{r.LeftKind, r.Left}, {r.RightKind, r.Right}} {
			if side.kind != "del" && side.kind != "add" {
				continue
			}
			t := strings.TrimSpace(side.text)
			if !(t == "" || t == "(" || t == ")" || strings.HasPrefix(t, "package ") || strings.HasPrefix(t, "import") ||
				strings.HasPrefix(t, "//") || importPath.MatchString(t)) {
				return false
			}
		}
	}
	return true
}

// importPath matches a line of an import block: "path" or name "path".
var importPath = regexp.MustCompile(`^([\w.]+\s+)?"[^"]+"$`)
