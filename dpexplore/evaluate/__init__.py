"""dpexplore.evaluate"""
