"""dpexplore.plots"""
