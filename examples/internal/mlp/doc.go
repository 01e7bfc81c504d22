// Package mlp is the model that examples/train and examples/dataparallel
// train: a multilayer perceptron of Dense layers with softmax
// cross-entropy and SGD with momentum, written on cuarray as a user would
// write it, and the synthetic data it learns (a random teacher network's
// labels). It lives under internal/ so that both examples share one copy
// without it becoming API; bench/pytorch_train.py is the same model in
// PyTorch.
package mlp
