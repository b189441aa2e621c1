"""dpexplore.models: private classifiers, scikit-learn style estimators.

* :class:`PrivateNaiveBayes` (Bernoulli, the thesis's Algorithm 1), :class:`PrivateGaussianNB`
  and the public-cut-point :class:`Binarizer` (``naive_bayes.py``).
* :class:`PrivateLogisticRegression`: Chaudhuri et al.'s output and objective perturbation
  (``logistic.py``).
* :class:`HistogramClassifier`: the classifier of a noisy histogram over a grid (``histogram.py``).
* :class:`SelectThenTrain`: one ε split between private feature selection and a private model
  (``pipeline.py``).
"""
from .. import _lazy

__all__ = ["PrivateNaiveBayes", "PrivateGaussianNB", "Binarizer", "PrivateLogisticRegression",
           "HistogramClassifier", "SelectThenTrain"]

# each model's module (and scikit-learn) is imported on first use
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "HistogramClassifier": ".histogram", "PrivateLogisticRegression": ".logistic",
    "Binarizer": ".naive_bayes", "PrivateGaussianNB": ".naive_bayes", "PrivateNaiveBayes": ".naive_bayes",
    "SelectThenTrain": ".pipeline"}, globals())
