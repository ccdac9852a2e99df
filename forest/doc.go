// Package forest fits random forests for regression and classification,
// with scikit-learn's option names and defaults, and predicts with them.
// It is the library behind `gotrain forest train` and `gotrain forest
// predict`: the commands parse flags, call the functions below and print
// their results, so a Go program that calls them gets the commands'
// behaviour.
//
// # Fitting and predicting
//
// [Fit] fits a [Forest] on a *data.Dataset (package data reads CSV files,
// MNIST and the embedded diabetes and digits sets) with [Options]. The
// forest depends only on the data and the options, Seed included, not on
// the number of threads. [Forest.Predict] and [Forest.PredictValues]
// predict the rows of a row-major matrix; [Forest.PredictData] predicts a
// data set whose columns it picks by name ([Forest.FeatureMatrix]), and
// its [Predictions] write themselves as CSV ([Predictions.WriteCSV], or
// atomically to a file with [Predictions.WriteFile]).
//
// [Forest.Save] and [Forest.SaveFile] write a forest in the model file
// format below; [Load] and [LoadFile] read it back.
//
// # What the commands do
//
// [LoadData] reads the training and test sets a [DataSpec] names, as
// `forest train`'s flags do: an embedded data set with an 80/20 hold-out
// split, MNIST from its folder ([data.MNISTDir]), or CSV files, whose test
// columns and class labels are checked against the training ones. [Train]
// fits (with a [Learner]: [Native], or package forestgraph's Learner on a
// GoMLX device), repeats for timing, scores the test set ([Accuracy],
// [MeanSquaredError], [R2]) and adds feature importances; its
// [TrainResult] is the report of `forest train` (in JSON, and as text with
// [TrainResult.WriteText]), the device, the data's name and the model file
// filled in by the caller.
//
// # Trees
//
// A [Tree] is stored in flat arrays, nodes in breadth-first order: node 0
// is the root, an internal node i splits on Feature[i] at [Tree.Threshold]
// (rows with a value <= Threshold(i) go to Left[i], the others to Left[i]+1,
// missing values as [Tree.MissingLeft] says) — or, for a categorical feature,
// by the set of categories Sets[Category[i]] (the codes that go left) —
// and every node i holds
// [Forest.Outputs] values at Value[i*Outputs():] (the mean target, or the
// class probabilities), which a leaf (Feature[i] < 0) predicts. What only a
// split has is kept per split and the thresholds are read from the bin
// edges, so a regression tree takes about 29 bytes a node in memory (the
// file keeps 46, below). docs/FOREST.md specifies the learner
// exactly: binning, the random stream, the split rules.
//
// # Model file format
//
// [Forest.Save] and [Forest.SaveFile] write a fitted forest, and [Load] and
// [LoadFile] read it back; a loaded forest predicts bit for bit as the saved
// one did. A model file is, in order (all integers little-endian):
//
//  1. the 14 magic bytes "GOTRAINFOREST\n";
//  2. the format version, a uint32: 2 for a forest that uses an
//     addition of version 2 (the random splitter, leaf samples, class
//     weights, a least leaf weight fraction, categorical features), else
//     1, so that a forest that uses none is written byte for byte as
//     before them; readers take versions 1 and 2;
//  3. the header length H, a uint64, at most 64 MiB;
//  4. H bytes of header: one UTF-8 JSON object (described below);
//  5. the trees, one after the other (described below), then the
//     category sets and the leaf samples when the forest has them;
//  6. a uint32 CRC-32 (Castagnoli polynomial) of every byte before it,
//     magic included.
//
// The header is self-describing. Its fields are:
//
//	format        "gotrain-forest"
//	version       1 or 2, as in the binary prefix
//	created_by    "gotrain"
//	task          "regression" or "classification"
//	criterion     "squared_error", "gini" or "entropy"
//	options       the other fitting options: trees, max_depth,
//	              min_samples_split, min_samples_leaf, max_features,
//	              bootstrap, max_samples, seed, bins, threads, oob, and
//	              from version 2 splitter ("random"; absent for the
//	              best splitter), keep_leaf_samples (true; absent
//	              otherwise), class_weight and min_weight_fraction_leaf
//	              (absent when not set), all refused in a version 1 file
//	features      feature names: null, or num_features strings
//	target        target name
//	classes       class names: null for regression, outputs strings for
//	              classification
//	num_features  number of input features
//	num_trees     number of trees
//	outputs       values per node: 1 for regression, the number of classes
//	              for classification
//	node_counts   number of nodes of each tree (num_trees integers)
//	tree_layout   the names and types of the per-tree arrays, in order (the
//	              list below); a reader rejects a layout it does not know
//	bin_edges     each feature's ascending, finite bin edges (at most 254);
//	              null for a feature without any (non-missing) value
//	oob_score     out-of-bag score: a number; null when not computed (NaN);
//	              "Infinity" or "-Infinity" for infinite values
//	oob_rows      number of training rows with an out-of-bag tree
//	leaf_samples  version 2, with keep_leaf_samples only: train_rows (the
//	              training rows n) and counts (the rows kept by each
//	              tree, K_t: the in-bag rows)
//	categories    version 2, with a categorical feature only: each
//	              feature's dictionary, its categories in increasing
//	              bytewise order (at most 254), null for a numeric one;
//	              a categorical feature's bin_edges are 0.5, 1.5, ...
//	category_sets version 2, with categories only: each tree's number
//	              of category sets S_t
//
// Readers ignore header fields they do not know. Each tree of n nodes
// (n = node_counts[t]) is stored as these arrays, each complete before the
// next, nodes in the tree's breadth-first order:
//
//	feature       n × int32    split feature, -1 at leaves
//	left          n × int32    left child (the right child is left+1), -1 at leaves
//	bin           n × uint8    split bin: bin codes <= bin go left (0 for a categorical split)
//	missing_left  n × uint8    1 when missing values go left, else 0
//	threshold     n × float64  split threshold, bin_edges[feature][bin] (0 for a categorical split)
//	value         n·outputs × float64  node values, outputs per node
//	samples       n × int32    distinct training rows reaching the node
//	weight        n × int64    bootstrap-weighted rows reaching the node
//	gain          n × float64  weighted impurity decrease of the split
//
// Floats are IEEE 754 binary64 bit patterns, so a tree is 38 + 8·outputs
// bytes per node. A leaf's bin, missing_left, threshold and gain are 0.
//
// With categories (version 2), the trees are followed by the category
// sets: for each tree t, S_t sets of 4 × uint64 (bit c of word c/64: code
// c goes left; the codes are the categories' indices, the missing code
// len(dictionary), and 255 for a category the dictionary lacks), one per
// node that splits a categorical feature, in node order.
//
// With leaf_samples (version 2), the trees (and category sets) are
// followed by the leaf samples section: the n training targets (n × float64), then for each
// tree t its K_t kept rows (K_t × int32, indices of training rows, grouped
// by leaf, the leaves in node order, each group in increasing order) and
// their weights in the tree (K_t × int64: bootstrap count times
// fixed-point sample weight). A leaf's group holds as many rows as the
// leaf's samples, whose weights, each at least 1, sum to its weight; a
// reader checks all of this.
//
// Loading checks the structure fully, so that a damaged or hostile file is
// an error, never a panic or an outsized allocation. Sizes are bounded: at
// most 2^20 trees, 2^28 nodes, 2^31-1 values and depth 2^20 per tree, 65534
// features, 2^16 outputs and 2^40 bytes of trees. When the reader's size is
// known, they are checked against it before anything is allocated; otherwise
// arrays grow only as their bytes arrive. The options must be valid; every feature index must be in range;
// the children of the internal nodes, taken in node order, must be exactly
// nodes 1, 2, 3, … (so every node but the root has one parent, which comes
// before it); every numeric split bin must be a bin edge of its feature
// and its threshold that edge; a categorical split has bin 0, threshold 0,
// a set of its own, and missing_left telling whether the set holds the
// missing code; values, thresholds and gains must be finite, and the
// checksum must match.
package forest
