// Types of web/gotrain.mjs (docs/WEBGPU.md, "The JavaScript API").

export type Task = 'regression' | 'classification';
export type Device = 'webgpu' | 'cpu';

/** Training data: an embedded set, CSV text, or a row-major matrix (NaN: missing). */
export type TrainData =
  | string
  | { dataset: 'diabetes' | 'digits' }
  | { csv: string; target?: string; task?: Task }
  | { x: Float64Array | number[]; y: Float64Array | number[]; rows?: number; cols: number; featureNames?: string[]; task?: Task };

/** forest.Options in camelCase, plus the device (default 'webgpu'). */
export interface TrainOptions {
  device?: Device;
  task?: Task;
  trees?: number;
  maxDepth?: number;
  minSamplesSplit?: number;
  minSamplesLeaf?: number;
  maxFeatures?: string;
  bootstrap?: boolean;
  maxSamples?: number;
  seed?: number | string;
  bins?: number;
  criterion?: 'squared_error' | 'gini' | 'entropy';
  splitter?: 'best' | 'random';
  oob?: boolean;
  classWeight?: string;
  minWeightFractionLeaf?: number;
  threads?: number;
}

export interface TrainReport {
  device: Device;
  seconds: number;
  trees: number;
  nodes: number;
  oobScore?: number;
  /** WebGPU fits only. */
  adapter?: string;
  dispatches?: Record<'bootstrap' | 'histogram' | 'partition', number>;
  levels?: number;
  treesPerBatch?: number;
  scatteredNodes?: number;
  derivedNodes?: number;
  histogramPasses?: number;
}

export interface Prediction {
  /** Forest.PredictValues: one value per row, or `outputs` class probabilities per row. */
  values: Float64Array;
  /** Forest.Predict: the value, or the most probable class's index. */
  predictions: Float64Array;
  outputs: number;
  device: Device;
}

export interface Dataset {
  x: Float64Array;
  y: Float64Array;
  rows: number;
  cols: number;
  featureNames: string[];
  target: string;
  task: Task;
}

export interface ModelInfo {
  task: Task;
  trees: number;
  nodes: number;
  depth: number;
  features: string[];
  numFeatures: number;
  classes: string[];
  target: string;
  oobScore?: number;
}

export interface Gotrain {
  openGPU(): Promise<{ adapter: string }>;
  dataset(name: 'diabetes' | 'digits'): Promise<Dataset>;
  train(data: TrainData, options?: TrainOptions): Promise<{ model: Uint8Array; report: TrainReport }>;
  trainCSV(text: string, options?: TrainOptions & { target?: string }): Promise<{ model: Uint8Array; report: TrainReport }>;
  predict(model: Uint8Array, x: Float64Array | number[], rows: number, options?: { device?: Device }): Promise<Prediction>;
  describe(model: Uint8Array): Promise<ModelInfo>;
  /** '' when the trees are equal node for node, else the first difference. */
  diffModels(a: Uint8Array, b: Uint8Array): Promise<string>;
  /** Node: writes the file and returns its path; a browser: returns a Blob. */
  saveModel(model: Uint8Array, file?: string): Promise<string | Blob>;
  loadModel(src: Uint8Array | Blob | string): Promise<Uint8Array>;
}

export function load(options?: { wasm?: string; wasmExec?: string; gpuFlags?: string[] }): Promise<Gotrain>;
