package radioml_test

import (
	"fmt"
	"log"

	"github.com/gotrain/gotrain/signal/radioml"
)

// Open a RadioML 2018.01A file (here the test fixture of its layout; the
// real one is GOLD_XYZ_OSC.0001_1024.hdf5) and read two records: their
// class, its package signal modulation, the SNR and the first sample.
func Example() {
	f, err := radioml.Open("testdata/small.hdf5")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(f.N, "records of", f.FrameLen, "samples")
	b, err := f.Read(16, 18)
	if err != nil {
		log.Fatal(err)
	}
	for i := range b.Class {
		fmt.Printf("%s (%s) at %d dB, first sample %v\n",
			radioml.Classes[b.Class[i]], radioml.Modulation(b.Class[i]), b.SNR[i], b.Record(i)[0])
	}
	// Output:
	// 48 records of 1024 samples
	// 16APSK (16apsk) at -20 dB, first sample (-1.890625-0.9609375i)
	// 16APSK (16apsk) at 30 dB, first sample (-0.88378906-0.7084961i)
}
