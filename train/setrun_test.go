package train

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetRun(t *testing.T) {
	dirOf := func(p string) (string, error) {
		if strings.HasPrefix(p, "bad") {
			return "", errors.New("no such run")
		}
		return filepath.Dir(p), nil
	}
	tests := []struct {
		name, batch, resume string
		noCheckpoint        bool
		patience            int
		wantBatch           int
		wantAuto, wantRes   bool
		wantDir             string
		wantErr             string
	}{
		{name: "defaults kept", patience: 5, wantBatch: 32, wantDir: "out"},
		{name: "batch N", batch: "8", patience: 5, wantBatch: 8, wantDir: "out"},
		{name: "batch auto", batch: "AUTO", patience: 5, wantBatch: 32, wantAuto: true, wantDir: "out"},
		{name: "bad batch", batch: "0", patience: 5, wantErr: "BatchSize"},
		{name: "latest", resume: ResumeLatest, patience: 5, wantBatch: 32, wantRes: true, wantDir: "out"},
		{name: "a path", resume: "runs/run-1/ckpt.gtc", patience: 5, wantBatch: 32, wantRes: true, wantDir: "runs/run-1"},
		{name: "a bad path", resume: "bad/x", patience: 5, wantErr: "Resume=bad/x: no such run"},
		{name: "resume without checkpoints", resume: ResumeLatest, noCheckpoint: true, patience: 5, wantErr: "Resume and NoCheckpoint exclude each other"},
		{name: "patience 0 is off", patience: 0, wantBatch: 32, wantDir: "out"},
	}
	c := DefaultConfig()
	if _, err := c.SetRun("", "out", "/nonexistent/run-1", nil); err == nil || !strings.HasPrefix(err.Error(), "Resume=/nonexistent/run-1: train: resume from") {
		t.Errorf("SetRun with a nil resumeDir: %v, want ResumeDir's error", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.BatchSize, c.EarlyStopMonitor, c.EarlyStopPatience, c.NoCheckpoint = 32, "val_loss", tt.patience, tt.noCheckpoint
			auto, err := c.SetRun(tt.batch, "out", tt.resume, dirOf)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("SetRun = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if auto != tt.wantAuto || c.BatchSize != tt.wantBatch || c.Resume != tt.wantRes || c.CheckpointDir != tt.wantDir {
				t.Errorf("auto %v, BatchSize %d, Resume %v, CheckpointDir %q; want %v, %d, %v, %q",
					auto, c.BatchSize, c.Resume, c.CheckpointDir, tt.wantAuto, tt.wantBatch, tt.wantRes, tt.wantDir)
			}
			if off := c.EarlyStopMonitor == ""; off != (tt.patience == 0) || c.EarlyStopPatience < 1 {
				t.Errorf("patience %d: monitor %q, patience %d", tt.patience, c.EarlyStopMonitor, c.EarlyStopPatience)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("the configuration is not valid: %v", err)
			}
		})
	}
}
