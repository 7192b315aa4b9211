"""Every read of the store. (Being written.)"""
