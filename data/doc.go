// Package data loads tabular and image data sets into a common in-memory form
// for training and evaluating models.
//
// A [Dataset] holds a dense, row-major feature matrix of float64 values in
// which NaN marks a missing value, together with one target value per row.
// For classification the targets are class indices 0..K-1 and, when the
// labels were read from text, [Dataset.Classes] names them.
//
// Data sets come from four sources:
//
//   - CSV files with a header row, read by [ReadCSV] and [LoadCSV];
//   - Parquet and Arrow IPC files, read by [LoadParquet] and [LoadArrow]
//     column by column, by the CSV reader's rules, so that the same table
//     gives the same Dataset ([LoadFile] picks the reader by the file's
//     content);
//   - small data sets compiled into the package: [Diabetes] (regression) and
//     [Digits] (classification), both from scikit-learn, BSD-3-Clause;
//   - MNIST in its IDX format, read by [LoadMNIST], [ReadIDXImages] and
//     [ReadIDXLabels], plain or gzipped; [OpenMNIST] keeps the pixels as
//     bytes, read a column at a time (one byte a pixel instead of eight).
//
// [TrainTestSplit] and [KFold] produce deterministic index splits from a
// seed, following scikit-learn's conventions for split sizes.
//
// Every error returned by this package starts with "data: " and names the file
// (or the name given by the caller) it concerns; errors about a CSV value also
// name the line and the column, and about a Parquet or Arrow value the row
// and the column.
package data
