"""dpexplore.models"""
