"""dpexplore.models: private classifiers, scikit-learn style estimators.

* :class:`PrivateNaiveBayes` (Bernoulli, the thesis's Algorithm 1) and :class:`PrivateGaussianNB`
  (``naive_bayes.py``); their public-cut-point :class:`Binarizer` lives in :mod:`dpexplore.encode`.
* :class:`PrivateLogisticRegression`: Chaudhuri et al.'s output and objective perturbation, and
  :class:`PrivateLRClassifier`, its one-vs-rest form on a table's public encoding
  (``logistic.py``).
* :class:`HistogramClassifier`: the classifier of a noisy histogram over a grid (``histogram.py``).
* :class:`SelectThenTrain`: one ε split between private feature selection and a private model
  (``pipeline.py``).
"""
from .. import _lazy

__all__ = ["PrivateNaiveBayes", "PrivateGaussianNB", "Binarizer", "PrivateLogisticRegression",
           "PrivateLRClassifier", "HistogramClassifier", "SelectThenTrain"]

# each model's module (and scikit-learn) is imported on first use
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "HistogramClassifier": ".histogram", "PrivateLogisticRegression": ".logistic",
    "PrivateLRClassifier": ".logistic", "Binarizer": "..encode", "PrivateGaussianNB": ".naive_bayes",
    "PrivateNaiveBayes": ".naive_bayes", "SelectThenTrain": ".pipeline"}, globals())
