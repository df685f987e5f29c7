// Command train builds the intent model from the labelled corpus:
//
//	go generate ./internal/qualify/intent
//
// or, from the repository's root,
//
//	go run ./internal/qualify/intent/train -corpus internal/qualify/corpus -out internal/qualify/intent/model.bin
//
// It learns from the lines whose split is "train" only, and writes the same
// bytes every time for the same corpus.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cleanads/cleanads/internal/qualify/intent"
)

func main() {
	corpus := flag.String("corpus", "../corpus", "directory of the corpus's *.jsonl files")
	out := flag.String("out", "model.bin", "model file to write")
	flag.Parse()
	if err := run(*corpus, *out); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	es, hash, err := intent.ReadCorpus(os.DirFS(dir), ".")
	if err != nil {
		return err
	}
	intent.SortExamples(es)
	m, rep, err := intent.Train(es, hash, intent.DefaultTrainOptions())
	if err != nil {
		return err
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	fmt.Printf("trained on %d lines (%v per class), calibrated by %d-fold cross-validation\n",
		rep.Lines, m.Trained, rep.Folds)
	fmt.Printf("cross-validation: accuracy %.1f%% (likeliest class), temperature %.2f\n%s\n",
		100*rep.Accuracy, m.Temperature, m.Calibration)
	fmt.Println("confusion by cross-validation (rows: labelled; columns: likeliest):")
	for c := range intent.NumClasses {
		fmt.Printf("  %-9s %v\n", intent.Class(c), rep.Confusion[c])
	}
	fmt.Printf("wrote %s: %d bytes, corpus %s\n", out, len(b), hash[:12])
	return nil
}
