from setuptools import setup

kwargs = {
    'name': 'kw-project',
    'install_requires': ['tqdm>=4', 'colorama==0.4.6'],
}

if __name__ == '__main__':
    setup(**kwargs)
