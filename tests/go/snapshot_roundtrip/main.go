// Command snapshot_roundtrip proves evalledger's work-quality snapshot files against the seed's
// own Go types: every file named on the command line must load into quality.Snapshot (no unknown
// field) and marshal back, with json.MarshalIndent(v, "", "  ") plus a newline as
// SnapshotStore.Write does, to exactly the bytes it was read from. Go's encoder is the judge of
// the contract, not our reading of it.
//
// With -write DIR it instead writes a small history as the seed's SnapshotStore.Write lays it
// out (the fixture `snapshot import` reads: a history kept by the seed's own code).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The seed's types, verbatim (seed 003, package quality).

type Dimension string

type Relative string

type Metrics struct {
	CostUSD    float64 `json:"cost_usd"`
	Tokens     int     `json:"tokens"`
	DurationMS int64   `json:"duration_ms"`
	Iterations int     `json:"iterations"`
	ModelCalls int     `json:"model_calls"`
	Retries    int     `json:"retries"`
}

type JudgeVerdict struct {
	Model             string                 `json:"model"`
	Family            string                 `json:"family"`
	SameFamilyAsBot   bool                   `json:"same_family_as_bot"`
	Scores            map[Dimension]float64  `json:"scores"`
	Narrative         string                 `json:"narrative"`
	RelativeVsPrev    map[Dimension]Relative `json:"relative_vs_prev,omitempty"`
	RelativeNarrative string                 `json:"relative_narrative,omitempty"`
	Confidence        float64                `json:"confidence"`
}

type Aggregate struct {
	Verdicts     []JudgeVerdict        `json:"verdicts"`
	MeanScores   map[Dimension]float64 `json:"mean_scores"`
	Disagreement map[Dimension]float64 `json:"disagreement,omitempty"` // max-min spread per dimension
	Note         string                `json:"note,omitempty"`         // e.g. judges skipped, family overlap
	// evalledger's optional fields (additive at schema_version 1, issue 36; a reader of the seed's
	// types without them ignores them): each dimension's standard error over the judges and its
	// 95% interval, written by `snapshot show --uncertainty`.
	StdErr map[Dimension]float64    `json:"stderr,omitempty"`
	CI95   map[Dimension][2]float64 `json:"ci95,omitempty"`
}

type Delta struct {
	PrevRunID    string                `json:"prev_run_id"`
	OverallDelta float64               `json:"overall_delta"` // cur.overall - prev.overall
	ValueDelta   float64               `json:"value_delta"`   // cur.value_for_money - prev
	PerDimension map[Dimension]float64 `json:"per_dimension"` // cur - prev, per dimension
	Verdict      Relative              `json:"verdict"`       // headline (overall) better/same/worse
}

type Snapshot struct {
	SchemaVersion  int       `json:"schema_version"`
	Kind           string    `json:"kind"` // "bot" | "feature"
	Name           string    `json:"name"`
	Persona        string    `json:"persona,omitempty"`
	RunID          string    `json:"run_id"`
	At             time.Time `json:"at"`
	BotVersion     string    `json:"bot_version,omitempty"`
	IterionSHA     string    `json:"iterion_sha,omitempty"`
	Task           string    `json:"task,omitempty"`
	Metrics        Metrics   `json:"metrics"`
	Aggregate      Aggregate `json:"aggregate"`
	EvidenceDigest string    `json:"evidence_digest,omitempty"` // diffstat / counts / report excerpt
	PrevRunID      string    `json:"prev_run_id,omitempty"`
	Comparison     *Delta    `json:"comparison,omitempty"` // vs the previous snapshot, computed deterministically
}

func check(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // a misspelt field would otherwise vanish silently
	var snap Snapshot
	if err := dec.Decode(&snap); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	out, err := json.MarshalIndent(&snap, "", "  ")
	if err != nil {
		return fmt.Errorf("marshal: %w", err)
	}
	out = append(out, '\n')
	if !bytes.Equal(out, raw) {
		i := 0
		for i < len(out) && i < len(raw) && out[i] == raw[i] {
			i++
		}
		lo := i - 60
		if lo < 0 {
			lo = 0
		}
		hi := func(b []byte) int {
			if i+60 < len(b) {
				return i + 60
			}
			return len(b)
		}
		return fmt.Errorf("re-marshalled bytes differ at byte %d:\nfile: %q\ngo:   %q", i, raw[lo:hi(raw)], out[lo:hi(out)])
	}
	return nil
}

// writeHistory lays out two snapshots of one target the way the seed's store does: the file
// name from At and the sanitised run id, MarshalIndent plus a newline, the second compared
// with the first as the seed's Compare does.
func writeHistory(root string) error {
	at := time.Date(2026, 6, 25, 10, 0, 0, 123456789, time.UTC)
	first := &Snapshot{SchemaVersion: 1, Kind: "bot", Name: "review-pr", Persona: "Revi", RunID: "run-a", At: at,
		Task: "find the planted bug", Metrics: Metrics{CostUSD: 0.12, Tokens: 3456, DurationMS: 9000, Iterations: 2, ModelCalls: 5},
		Aggregate: Aggregate{
			Verdicts: []JudgeVerdict{
				{Model: "openai/gpt-5.5", Family: "openai", Scores: scores(0.8, 0.7), Narrative: "Found the bug <parse>.", Confidence: 0.8},
				{Model: "anthropic/claude-sonnet-4-6", Family: "anthropic", SameFamilyAsBot: true, Scores: scores(0.6, 0.7), Narrative: "Partial & slow.", Confidence: 0.7},
			},
			MeanScores:   scores(0.7, 0.7),
			Disagreement: map[Dimension]float64{"overall": 0.2, "value_for_money": 0},
			Note:         "judge anthropic/claude-sonnet-4-6 shares the bot's family",
		},
		EvidenceDigest: "1 file changed, 2 insertions(+)",
	}
	second := &Snapshot{SchemaVersion: 1, Kind: "bot", Name: "review-pr", Persona: "Revi", RunID: "run-b", At: at.Add(26 * time.Hour),
		Metrics: Metrics{CostUSD: 0.3, Tokens: 9000, DurationMS: 20000, Iterations: 4, ModelCalls: 9, Retries: 1},
		Aggregate: Aggregate{
			Verdicts: []JudgeVerdict{{Model: "openai/gpt-5.5", Family: "openai", Scores: scores(0.6, 0.5), Narrative: "Worse.",
				RelativeVsPrev: map[Dimension]Relative{"overall": "worse"}, RelativeNarrative: "Missed it this time.", Confidence: 0.9}},
			MeanScores: scores(0.6, 0.5),
		},
		PrevRunID: "run-a",
	}
	second.Comparison = &Delta{PrevRunID: "run-a", OverallDelta: second.Aggregate.MeanScores["overall"] - first.Aggregate.MeanScores["overall"],
		ValueDelta: second.Aggregate.MeanScores["value_for_money"] - first.Aggregate.MeanScores["value_for_money"],
		PerDimension: map[Dimension]float64{}, Verdict: "worse"}
	for d, v := range second.Aggregate.MeanScores {
		second.Comparison.PerDimension[d] = v - first.Aggregate.MeanScores[d]
	}
	for _, snap := range []*Snapshot{first, second} {
		dir := filepath.Join(root, snap.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		b, err := json.MarshalIndent(snap, "", "  ")
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%s__%s.json", snap.At.UTC().Format("20060102T150405Z"), strings.TrimSpace(snap.RunID))
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// scores: every dimension at base, value_for_money at value.
func scores(base, value float64) map[Dimension]float64 {
	m := map[Dimension]float64{}
	for _, d := range []Dimension{"efficacy", "completeness", "output_quality", "restraint", "reliability", "overall"} {
		m[d] = base
	}
	m["value_for_money"] = value
	return m
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-write" {
		if err := writeHistory(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	failed := false
	for _, path := range os.Args[1:] {
		if err := check(path); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("%d snapshot files re-marshal identically\n", len(os.Args)-1)
}
