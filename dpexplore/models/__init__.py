"""dpexplore.models: private classifiers, scikit-learn style estimators.

* :class:`PrivateNaiveBayes` (Bernoulli, the thesis's Algorithm 1), :class:`PrivateGaussianNB`
  and the public-cut-point :class:`Binarizer` (``naive_bayes.py``).
* :class:`PrivateLogisticRegression`: Chaudhuri et al.'s output and objective perturbation
  (``logistic.py``).
* :class:`HistogramClassifier`: the classifier of a noisy histogram over a grid (``histogram.py``).
* :class:`SelectThenTrain`: one ε split between private feature selection and a private model
  (``pipeline.py``).
"""
from .histogram import HistogramClassifier
from .logistic import PrivateLogisticRegression
from .naive_bayes import Binarizer, PrivateGaussianNB, PrivateNaiveBayes
from .pipeline import SelectThenTrain

__all__ = ["PrivateNaiveBayes", "PrivateGaussianNB", "Binarizer", "PrivateLogisticRegression",
           "HistogramClassifier", "SelectThenTrain"]
