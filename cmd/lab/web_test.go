package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/workshop"
)

// stepperPage is what the page answers for naive/checkthenact's race.
func stepperPage(t *testing.T, data *workshop.Data) (int, string) {
	t.Helper()
	h, err := workshop.Handler(data)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/step?v=naive/checkthenact&s=Race", nil))
	return w.Code, w.Body.String()
}

// TestExportStepper runs the export go run ./cmd/lab web starts with,
// before any matrix: it hands the page every tree (stepperTrees of them,
// as the progress note counts), and the stepper's page is then the
// stepper.
func TestExportStepper(t *testing.T) {
	if !labtest.FullSuite() {
		t.Skipf("the quick suite: the export runs go test ./scenarios, which %s=1 runs", labtest.FullEnv)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data := &workshop.Data{Tabs: workshop.Finished(report.New(nil, nil))}
	if err := exportStepper(context.Background(), root, filepath.Join(t.TempDir(), "stepper.json"), data); err != nil {
		t.Fatalf("exportStepper = %v, want nil", err)
	}
	if data.Stepper == nil || len(data.Stepper.Trees) != stepperTrees || data.Stepper.Tree("naive/checkthenact", "Race") == nil {
		t.Fatalf("exportStepper handed the page %v, want %d trees, naive/checkthenact × Race among them", data.Stepper, stepperTrees)
	}
	rep := report.New([]report.ScenarioInfo{{Name: "Race", Short: "Race"}}, []report.VariantResults{{Name: "naive/checkthenact"}})
	data.Tabs = workshop.Finished(rep)
	if code, body := stepperPage(t, data); code != http.StatusOK || !strings.Contains(body, `id="stepper"`) {
		t.Errorf("the stepper's page after the export = %d:\n%.300s\nwant 200 and the stepper", code, body)
	}
}

// TestExportStepperFails: an export that cannot run (here: no module to
// test) is returned, and the stepper's page says why instead of waiting.
func TestExportStepperFails(t *testing.T) {
	data := &workshop.Data{Tabs: workshop.Finished(report.New(nil, nil))}
	dir := t.TempDir()
	err := exportStepper(context.Background(), dir, filepath.Join(dir, "stepper.json"), data)
	if err == nil || !strings.Contains(err.Error(), "go test -run TestStepper failed") {
		t.Fatalf("exportStepper outside the module = %v, want go test's failure", err)
	}
	if code, body := stepperPage(t, data); code != http.StatusServiceUnavailable || !strings.Contains(body, "could not be made:</b> go test -run TestStepper failed") ||
		strings.Contains(body, "refresh") {
		t.Errorf("the stepper's page after a failed export = %d:\n%s\nwant the failure said, and no reload", code, body)
	}
}
